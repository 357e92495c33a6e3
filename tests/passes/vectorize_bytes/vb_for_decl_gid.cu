// RUN: kltrans opt -p 'vectorize-bytes'
// GATE: corpus/histogram
// A byte histogram with the index declared in the for (a named gid, threadIdx.x first)
// and `&bins[data[gid]]` updates: one uint4 unit per iteration, default names.
// kltrans: launch histogram grid=min(ceil_div(n, 4096), 264) block=128
#include <stdint.h>

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n)
{
    const size_t count = n > 0 ? (size_t)n : 0;
    for (size_t gid = threadIdx.x + blockDim.x * blockIdx.x; gid < count;
         gid += blockDim.x * gridDim.x) {
        atomicAdd(&bins[data[gid]], 1u);
    }
}
