// RUN: kltrans opt -p 'global-atomics'
// ROUNDTRIP: none: privatize-atomics writes the merge on the bin itself (`if (bins[k])`), not through a copy, and the model cannot run a histogram (its bin index is a loaded value)
// GATE: corpus/histogram
// Privatized bins as tutorials write them: the zeroing loop unbraced, the merge reads a
// bin into a local and adds it only when it is above zero (a count is unsigned).
// kltrans: launch byte_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void byte_hist(const unsigned char* data, unsigned int* hist, int n)
{
    __shared__ unsigned int local_hist[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local_hist[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&local_hist[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int c = local_hist[b];
        if (c > 0)
            atomicAdd(&hist[b], c);
    }
}
