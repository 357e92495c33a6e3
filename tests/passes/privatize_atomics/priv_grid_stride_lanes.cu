// RUN: kltrans opt -p 'privatize-atomics{replicas=32}'
// GATE: corpus/histogram
// A grid-stride histogram with the index spelled threadIdx.x first, the bin count a
// #define and the bin an unsigned char read straight from the data; one counter column
// per lane (32 replicas), as the corpus expert keeps them.
#define NUM_BINS 256
// kltrans: launch hist_gs grid=min(ceil_div(n, 256), 64) block=256
extern "C" __global__ void hist_gs(const unsigned char* data, unsigned int* hist, int n)
{
    for (int idx = threadIdx.x + blockIdx.x * blockDim.x; idx < n; idx += blockDim.x * gridDim.x)
        atomicAdd(&hist[data[idx]], 1u);
}
