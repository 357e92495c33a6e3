// RUN: kltrans opt -p 'flatten-block{fast=y}'
// CHECK-SKIP: warps: the warps change
// Transposing the block regroups the warps, and the shuffle sums a warp.
// kltrans: launch col_sums grid=ceil_div(n, 64) block=(32, 2)
__global__ void col_sums(const float* x, float* out, int n)
{
    int i = blockIdx.x * 64 + threadIdx.y * 32 + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x == 0)
        out[blockIdx.x * 2 + threadIdx.y] = v;
}
