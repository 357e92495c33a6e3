// RUN: kltrans opt -p unroll-last-warp
// CHECK-SKIP: leader-reads: outside thread 0
// Every thread reads the block's total after the tree (a broadcast, as softmax does):
// without the last block barriers the threads of other warps would read it too early.
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
    if (i < n) out[1 + i] = sdata[0];
}
