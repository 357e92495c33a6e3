// RUN: kltrans opt -p 'vectorize-split{cast=uintptr_t,restrict=true,above=2,reassoc=true}'
// GATE: corpus/reduce-sum
// The grid-stride sum of the reduce-sum workload with a clamped size_t count: x is read
// as float4 from its first 16-byte boundary, with a scalar head and tail (any address,
// any n). The prologue goes above the two declarations before the loop.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 1024), 264) block=256
#include <stdint.h>

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    float acc = 0.0f;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        acc += x[i];
    }
    atomicAdd(out, acc);
}
