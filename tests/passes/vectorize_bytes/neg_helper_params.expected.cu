// RUN: kltrans opt -p 'vectorize-bytes'
// CHECK-SKIP: helper-params: the update uses mine, which is not a parameter of histogram: the helpers take the kernel's parameters
// The update goes through a local pointer the helpers could not see.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=256
#include <stdint.h>

extern "C" __global__ void histogram(const uint8_t* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;
    unsigned int* mine = bins;
    size_t i = tid;
    for (; i < count; i += nthreads) {
        atomicAdd(mine + data[i], 1u);
    }
}
