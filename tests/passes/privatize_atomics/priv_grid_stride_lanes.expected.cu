// RUN: kltrans opt -p 'privatize-atomics{replicas=32}'
// GATE: corpus/histogram
// A grid-stride histogram with the index spelled threadIdx.x first, the bin count a
// #define and the bin an unsigned char read straight from the data; one counter column
// per lane (32 replicas), as the corpus expert keeps them.
#define NUM_BINS 256
// kltrans: launch hist_gs grid=min(ceil_div(n, 256), 64) block=256
extern "C" __global__ void hist_gs(const unsigned char* data, unsigned int* hist, int n)
{
    __shared__ unsigned int s_bins[NUM_BINS * 32];
    for (int k = threadIdx.x; k < NUM_BINS * 32; k += blockDim.x) {
        s_bins[k] = 0u;
    }
    __syncthreads();
    for (int idx = threadIdx.x + blockIdx.x * blockDim.x; idx < n; idx += blockDim.x * gridDim.x)
        atomicAdd(&s_bins[data[idx] * 32 + threadIdx.x % 32], 1u);
    __syncthreads();
    for (int k = threadIdx.x; k < NUM_BINS; k += blockDim.x) {
        unsigned int total = 0u;
        for (int r = 0; r < 32; ++r) {
            total += s_bins[k * 32 + (r + k) % 32];
        }
        if (total) {
            atomicAdd(&hist[k], total);
        }
    }
}
