// RUN: kltrans opt -p tree-order --assume reassoc
// CHECK-SKIP: same-results: the block machine
// The guard also leaves slot 0's partner out of every round (tid > 0): rewritten with
// the sequential guard the rounds would fold what this kernel does not. The kernel model
// runs both on the block machine and finds them different.
// kltrans: launch reduce_sum grid=ceil_div(n, 64) block=64
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[64];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0 && tid > 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0] + sdata[1]);
}
