// RUN: kltrans opt -p 'group-sum{form=warp,warp=warp_sum,scratch=none,slot=-1,warp_form=shfl,define=warp}' --assume 'no_alias(*)' --assume reassoc
// CHECK-SKIP: strided-partial: the partial loop strides by 64: a warp sum adds 32 lanes
// The lanes stride by 64: a warp sum would miss half the row.
// kltrans: launch layernorm grid=ceil_div(rows, 4) block=128
// One warp per row: the lanes add their strided partial sums of the row with shuffles.
#include <cuda_bf16.h>

#define ROWS_PER_BLOCK 4

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) {
        return;
    }
    const __nv_bfloat16* xr = x + (size_t)row * cols;
    __nv_bfloat16* yr = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 64) {
        s += __bfloat162float(xr[c]);
    }
    s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += __bfloat162float(xr[c]);
    }
    const float mu = s / (float)cols;
    float var = 0.0f;
    for (int c = 0; c < cols; ++c) {
        const float d = __bfloat162float(xr[c]) - mu;
        var += d * d;
    }
    const float rs = 1.0f / sqrtf(var / (float)cols + eps);
    if (lane == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    for (int c = lane; c < cols; c += 32) {
        const float v = (__bfloat162float(xr[c]) - mu) * rs;
        yr[c] = __float2bfloat16(v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
    }
}
