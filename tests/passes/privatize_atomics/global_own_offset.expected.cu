// RUN: kltrans opt -p 'global-atomics'
// GATE: corpus/histogram
// A shared-memory histogram in the shape privatize-atomics writes, updates spelled
// `s_hist + v`: counting goes back to the global bins.
#define HIST_BINS 256
// kltrans: launch hist_private grid=ceil_div(n, 256) block=256
extern "C" __global__ void hist_private(const unsigned char* data, unsigned int* hist, int n)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n)
        atomicAdd(hist + data[i], 1u);
}
