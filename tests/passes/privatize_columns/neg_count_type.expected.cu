// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: count-type: bins holds float: the merge regroups the additions, exact only for integer counts
// Float bins: adding the columns in another order would round differently.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>
#define NBINS 256

extern "C" __global__ void histogram_naive(const uint8_t* data, float* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1.0f);
    }
}
