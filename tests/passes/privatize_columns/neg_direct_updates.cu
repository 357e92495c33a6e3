// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: direct-updates: bins is used at line 13 in histogram_naive (`bins[0]`), not only by atomicAdd updates (directly or through helpers)
// The bins are also written directly: those writes cannot be redirected to the columns.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>
#define NBINS 256

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
        if (i == 0) bins[0] += 0u;
    }
}
