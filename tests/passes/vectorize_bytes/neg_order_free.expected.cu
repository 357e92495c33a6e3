// RUN: kltrans opt -p 'vectorize-bytes'
// CHECK-SKIP: order-free: `record` is not an atomic update: the bytes are processed by other threads and in another order after the split
// A non-atomic call per byte: its order may matter.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=256
#include <stdint.h>

__device__ void record(unsigned int* p, unsigned int v) { *p += v; }

extern "C" __global__ void histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        record(bins + data[i], 1u);
    }
}
