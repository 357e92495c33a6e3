// RUN: kltrans opt -p unroll-last-warp
// GATE: corpus/reduce-sum
// Harris' sequential tree: once 64 slots are live, warp 0 finishes the last six rounds
// in straight code, each round's reads and writes separated by __syncwarp(). The same
// pairs are folded in the same order, so no tolerance is needed.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
