// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: smem-budget: 1024 bins x 32 columns x 4 B = 131072 B (+ 0 B already) exceed the 48 KiB of static shared memory
// 1024 bins in 32 columns need 128 KiB of shared memory.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>
#define NBINS 1024

extern "C" __global__ void histogram_naive(const unsigned short* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i] & 1023], 1u);
    }
}
