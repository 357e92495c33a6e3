// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: bin-count: no *BIN* constant tells the number of bins: give bins=N
// Nothing says how many bins there are.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
    }
}
