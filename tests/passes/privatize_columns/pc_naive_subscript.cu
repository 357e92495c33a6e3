// RUN: kltrans opt -p 'privatize-columns{bins=256,merge=subscript,pragma=false}'
// GATE: corpus/histogram
// The naive histogram (one thread per byte, `&bins[v]` updates): 256 bins given as an
// option, the merge written with `&bins[b]` and without an unroll pragma.
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
