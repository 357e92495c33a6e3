// RUN: kltrans opt -p 'direct-group-sum' --assume 'no_alias(*)' --assume reassoc
// GATE: corpus/layernorm
// 64 threads per row add their partial sums through a shared slot per warp and a
// barrier: each sums the row itself. The helpers, the block's scratch and the row
// function's scratch parameter go with the last call.
// kltrans: launch layernorm grid=ceil_div(rows, 2) block=128
// Two rows per block, 64 threads per row: the row's partial sums meet in a shared slot
// per warp. The row work is a device function; the block's scratch is its last argument.
#include <cuda_bf16.h>

#define LN_THREADS 128
#define GROUP 64

__device__ __forceinline__ float ln_warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, off);
    }
    return v;
}

// sum v over the G threads of a row group
__device__ __forceinline__ float ln_group_sum(float v, int G, float* red)
{
    v = ln_warp_sum(v);
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        red[warp] = v;
    }
    __syncthreads();
    const int W = G >> 5;
    const int first = (warp / W) * W;
    v = red[first];
    for (int w = 1; w < W; ++w) {
        v += red[first + w];
    }
    return v;
}

__device__ void ln_row(const __nv_bfloat16* xr, const __nv_bfloat16* weight,
                       const __nv_bfloat16* bias, __nv_bfloat16* yr, float* mean, float* rstd,
                       int row, bool active, int cols, float eps, int G, int gt,
                       float (*red)[LN_THREADS / 32])
{
    const int n = active ? cols : 0;
    float s = 0.0f;
    for (int c = gt; c < n; c += G) {
        s += __bfloat162float(xr[c]);
    }
    s = ln_group_sum(s, G, red[0]);
    const float mu = s / (float)cols;
    float sq = 0.0f;
    for (int c = 0; c < n; ++c) {
        const float d = __bfloat162float(xr[c]) - mu;
        sq += d * d;
    }
    const float rs = 1.0f / sqrtf(sq / (float)cols + eps);
    if (!active) {
        return;
    }
    if (gt == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    for (int c = gt; c < n; c += G) {
        const float a = (__bfloat162float(xr[c]) - mu) * rs;
        yr[c] = __float2bfloat16(a * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
    }
}

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    __shared__ float red[1][LN_THREADS / 32];

    const int gt = threadIdx.x % GROUP;
    const int row = blockIdx.x * (LN_THREADS / GROUP) + threadIdx.x / GROUP;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    ln_row(x + off, weight, bias, y + off, mean, rstd, row, active, cols, eps, GROUP, gt, red);
}
