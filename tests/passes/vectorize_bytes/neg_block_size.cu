// RUN: kltrans opt -p 'vectorize-bytes'
// CHECK-SKIP: block-size: block=8: the up to 15 head and 15 tail bytes need 15 threads
// Blocks of 8 threads: a one-block grid could not take all head bytes.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=8
#include <stdint.h>

extern "C" __global__ void histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        atomicAdd(bins + data[i], 1u);
    }
}
