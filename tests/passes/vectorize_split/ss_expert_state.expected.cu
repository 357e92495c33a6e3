// RUN: kltrans opt -p 'scalarize-split'
// GATE: corpus/reduce-sum
// The reduce-sum expert once its hints, block reduction and unrolled main loop are gone:
// the scalar head, the float4 loop over whole units (a __restrict__ vector pointer) and
// the scalar tail become one scalar grid-stride loop over count elements.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 8192), 1056) block=256
#include <stdint.h>

#define RS_THREADS 256
#define RS_UNROLL 4

extern "C" __global__ void
reduce_sum(const float* x, float* out, int n)
{

    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;

    // elements before the first 16-byte boundary (0..3), then whole float4s, then a tail

    float acc = 0.0f;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        acc += x[i];
    }

    // warp, then block reduction
    atomicAdd(out, acc);
}
