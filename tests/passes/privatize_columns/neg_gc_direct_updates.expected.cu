// RUN: kltrans opt -p 'global-columns{style=subscript}'
// CHECK-SKIP: direct-updates: col is used at line 23 in histogram_naive (`col[0]`), not only as the base of atomicAdd updates or handed to helpers
// The column pointer is also written through directly.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    __shared__ unsigned int counts[256 * 32];

    for (int k = threadIdx.x; k < 256 * 32; k += blockDim.x) {
        counts[k] = 0u;
    }
    __syncthreads();

    const int lane = threadIdx.x & 31;
    unsigned int* col = counts + lane;

    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = data[i];
        atomicAdd(col + (v << 5), 1u);
        col[0] += 0u;
    }
    __syncthreads();

    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        const unsigned int* row = counts + b * 32;
        unsigned int total = 0u;
        for (int l = 0; l < 32; ++l) {
            total += row[(l + b) & 31];
        }
        if (total != 0u) {
            atomicAdd(&bins[b], total);
        }
    }
}
