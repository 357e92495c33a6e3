// RUN: kltrans opt -p 'atomic-per-thread'
// CHECK-SKIP: reduction-shape: race on shared sdata
// The tree has no barrier between its rounds: a thread may read a slot before its owner
// wrote it, so thread 0's atomic is not the block's sum (a race, not a reduction).
// kltrans: launch reduce_sum grid=ceil_div(n, 128) block=128
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[128];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
    }
    if (tid == 0) {
        atomicAdd(out, sdata[0]);
    }
}
