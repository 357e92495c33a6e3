// RUN: kltrans opt -p 'global-columns'
// CHECK-SKIP: count-type: the column counters are unsigned int and the global bins int: counting globally would change the wrap-around
// Unsigned column counters merged into int bins.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void histogram_naive(const uint8_t* data, int* bins, int n)
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
