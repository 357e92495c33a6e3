// RUN: kltrans opt -p 'ungroup-rows' --assume 'no_alias(*)'
// CHECK-SKIP: launch-shape: grid=ceil_div(rows, 8) is not ceil_div(rows, max(1, 8 / ceil_div(cols, 1024))): rows per block as in the kernel
// The grid does not follow the template's rows per block.
// kltrans: launch layernorm grid=ceil_div(rows, 8) block=256
#include <cuda_bf16.h>

#define THREADS 256
#define WARP_COLS 1024

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    const int q = (cols + WARP_COLS - 1) / WARP_COLS;
    const int rpb = q >= 1 && q <= 8 ? 8 / q : 1;
    const int G = THREADS / rpb;
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    if (row >= rows) {
        return;
    }
    const __nv_bfloat16* xr = x + (size_t)row * cols;
    __nv_bfloat16* yr = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += __bfloat162float(xr[c]);
    }
    const float mu = s / (float)cols;
    float sq = 0.0f;
    for (int c = 0; c < cols; ++c) {
        const float d = __bfloat162float(xr[c]) - mu;
        sq += d * d;
    }
    const float rs = 1.0f / sqrtf(sq / (float)cols + eps);
    if (gt == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    for (int c = gt; c < cols; c += G) {
        const float a = (__bfloat162float(xr[c]) - mu) * rs;
        yr[c] = __float2bfloat16(a * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
    }
}
