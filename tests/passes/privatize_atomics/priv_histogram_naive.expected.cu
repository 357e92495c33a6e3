// RUN: kltrans opt -p 'privatize-atomics'
// GATE: corpus/histogram
// The histogram naive kernel: 256 bins (from the `v < 256u` guard) counted in shared
// memory per block, merged with one global atomicAdd per non-empty bin.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
// histogram naive: bins[v] += 1 for every byte v of data[0..n), 256 uint32 bins.
// The caller zeroes bins before the launch; one global atomicAdd per element.
// launch: grid = ceil(n/256), block = 256
#include <stdint.h>

extern "C" __global__ void histogram_naive(const uint8_t* data, unsigned int* bins, int n)
{
    __shared__ unsigned int s_bins[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        s_bins[k] = 0u;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int v = data[i];
        if (v < 256u) {
            atomicAdd(&s_bins[v], 1u);
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        if (s_bins[k]) {
            atomicAdd(&bins[k], s_bins[k]);
        }
    }
}
