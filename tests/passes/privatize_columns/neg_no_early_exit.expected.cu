// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: no-early-exit: a return at line 11: threads that leave early never reach the merge's __syncthreads()
// Threads past n return early and would miss the merge barrier.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>
#define NBINS 256

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    {
        atomicAdd(&bins[data[i]], 1u);
    }
}
