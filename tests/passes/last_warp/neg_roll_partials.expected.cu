// RUN: kltrans opt -p roll-last-warp
// CHECK-SKIP: loop-end: no warp reduction follows
// The loop stops at 64 live slots on purpose: every block hands its 64 partial sums to
// a second kernel. No warp finishes the tree, so there is nothing to roll back.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 64) out[blockIdx.x * 64 + tid] = sdata[tid];
}
