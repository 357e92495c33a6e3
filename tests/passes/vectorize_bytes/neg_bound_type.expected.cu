// RUN: kltrans opt -p 'vectorize-bytes'
// CHECK-SKIP: bound-type: the bound n is int: the head is clamped to it and subtracted from it in size_t, which needs a non-negative 64-bit bound
// The loop runs to the int n itself.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=256
#include <stdint.h>

extern "C" __global__ void histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t i = tid;
    for (; i < n; i += nthreads) {
        atomicAdd(bins + data[i], 1u);
    }
}
