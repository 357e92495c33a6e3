// RUN: kltrans opt -p 'privatize-columns{lane=i}'
// CHECK-SKIP: fresh-names: the name i is already used in histogram_naive
// The lane index may not take the name of the element index.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>
#define NBINS 256

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
    }
}
