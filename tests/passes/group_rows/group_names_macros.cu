// RUN: kltrans opt -p 'group-rows{W=COLS_PER_WARP,R=8,T=BLOCK,n=cols}' --assume 'no_alias(*)'
// GATE: corpus/layernorm
// Other names (gsize, rank, r) and macros: rows get 32 .. 256 threads by length; the
// normalize loop is already strided by the group.
// kltrans: launch layernorm grid=ceil_div(rows, BLOCK) block=BLOCK
#include <cuda_bf16.h>

#define BLOCK 256
#define COLS_PER_WARP 512

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    const int gsize = 1;
    const int rank = 0;
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = r < rows;
    const __nv_bfloat16* xr = x + (size_t)(live ? r : 0) * cols;
    __nv_bfloat16* yr = y + (size_t)(live ? r : 0) * cols;
    float s = 0.0f;
    float sq = 0.0f;
    for (int c = 0; c < cols; ++c) {
        const float v = __bfloat162float(xr[c]);
        s += v;
    }
    const float mu = s / (float)cols;
    for (int c = 0; c < cols; ++c) {
        const float d = __bfloat162float(xr[c]) - mu;
        sq += d * d;
    }
    const float rs = 1.0f / sqrtf(sq / (float)cols + eps);
    if (!live) {
        return;
    }
    if (rank == 0) {
        mean[r] = mu;
        rstd[r] = rs;
    }
    for (int j = rank; j < cols; j += gsize) {
        const float a = (__bfloat162float(xr[j]) - mu) * rs;
        yr[j] = __float2bfloat16(a * __bfloat162float(weight[j]) + __bfloat162float(bias[j]));
    }
}
