// RUN: kltrans opt -p 'scalarize-bytes'
// GATE: corpus/histogram
// What vectorize-bytes writes for a for-declared gid loop with `&bins[data[gid]]`
// updates (one unit per iteration): back to the scalar byte loop.
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
