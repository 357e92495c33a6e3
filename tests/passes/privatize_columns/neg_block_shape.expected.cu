// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: block-shape: block=100 is not whole warps: lane = threadIdx.x & 31 still works, but the pass only writes whole-warp blocks
// A block of 100 threads: not whole warps.
// kltrans: launch histogram_naive grid=ceil_div(n, 100) block=100
#include <stdint.h>
#define NBINS 256

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
    }
}
