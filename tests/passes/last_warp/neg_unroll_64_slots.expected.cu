// RUN: kltrans opt -p unroll-last-warp
// CHECK-SKIP: loop-end: 64 slots
// A block of 64 threads: warp 0 could finish the whole tree, but the loop would then keep
// no round: the rewrite would leave a loop that never runs.
// kltrans: launch reduce_sum grid=ceil_div(n, 64) block=64
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[64];
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
