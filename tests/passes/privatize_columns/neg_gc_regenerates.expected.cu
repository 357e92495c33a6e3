// RUN: kltrans opt -p 'global-columns{style=subscript}'
// CHECK-SKIP: regenerates: privatize-columns does not apply to the simplified kernel: block-shape: fails: block=100 is not whole warps: lane = threadIdx.x & 31 still works, but the pass only writes whole-warp blocks
// A block of 100 threads: privatize-columns would not write this kernel back.
// kltrans: launch histogram_naive grid=ceil_div(n, 100) block=100
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
