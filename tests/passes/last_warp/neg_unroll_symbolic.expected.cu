// RUN: kltrans opt -p unroll-last-warp
// CHECK-SKIP: same-results: the block machine
// The staged value is stored under a branch on the data (only positive elements): the
// block machine cannot run a store under a branch on a loaded value (a value-dependent
// if is if-converted only where it sets locals), so the rewrite is not checked, not made.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) sdata[tid] = x[i];
    else sdata[tid] = 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
