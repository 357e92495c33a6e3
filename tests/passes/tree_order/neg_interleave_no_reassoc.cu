// RUN: kltrans opt -p interleave-tree
// CHECK-SKIP: reduction-ops: --assume reassoc
// Interleaved pairs add the float sum in another order: only the workload's tolerance allows it.
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
