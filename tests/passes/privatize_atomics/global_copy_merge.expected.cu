// RUN: kltrans opt -p 'global-atomics'
// ROUNDTRIP: none: privatize-atomics writes the merge on the bin itself (`if (bins[k])`), not through a copy, and the model cannot run a histogram (its bin index is a loaded value)
// GATE: corpus/histogram
// Privatized bins as tutorials write them: the zeroing loop unbraced, the merge reads a
// bin into a local and adds it only when it is above zero (a count is unsigned).
// kltrans: launch byte_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void byte_hist(const unsigned char* data, unsigned int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i]], 1u);
}
