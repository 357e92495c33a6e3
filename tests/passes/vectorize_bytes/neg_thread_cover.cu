// RUN: kltrans opt -p 'vectorize-bytes'
// CHECK-SKIP: thread-cover: the loop starts at `tid`, not the global thread index: the head and tail bytes would not go to threads 0..15
// The loop starts at threadIdx.x (a block-strided loop).
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=256
#include <stdint.h>

extern "C" __global__ void histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        atomicAdd(bins + data[i], 1u);
    }
}
