// RUN: kltrans opt -p 'privatize-columns'
// CHECK-SKIP: bin-range: the bin index `data[i]` in histogram_naive is not provably in [0, 256) (nothing bounds `data[i]`); give --assume 'in_range(*)' if the data guarantees it
// An int value as the bin: nothing keeps it below 256.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>
#define NBINS 256

extern "C" __global__ void histogram_naive(const int* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[data[i]], 1u);
    }
}
