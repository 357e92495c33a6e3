// RUN: kltrans opt -p 'global-columns{style=subscript}'
// GATE: corpus/histogram
// What privatize-columns writes for the naive histogram (merge with &bins[b], no
// pragma): the updates go back to `&bins[v]`.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = data[i];
        atomicAdd(&bins[v], 1u);
    }
}
