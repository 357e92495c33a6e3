// RUN: kltrans opt -p "vectorize-bf16{unpack=bf16x8_to_float,temps=v+vw+vb,unroll=4,div=div}" --assume 'no_alias(*)' --assume reassoc
// GATE: corpus/layernorm
// kltrans: launch layernorm grid=ceil_div(rows, WARPS) block=256
// one warp per row, lanes stride over the columns
#include <cuda_bf16.h>
#include <stdint.h>

#define WARPS 8
#define FULL 0xffffffffu

__device__ inline void bf16x8_to_float(const uint4 v, float* out)
{
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        out[2 * k] = __uint_as_float(__byte_perm(w[k], 0, 0x1044));
        out[2 * k + 1] = __uint_as_float(__byte_perm(w[k], 0, 0x3244));
    }
}

extern "C" __global__ void layernorm(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                     const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean,
                                     float* rstd, int rows, int cols, float eps)
{
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    const __nv_bfloat16* xr = x + (size_t)row * cols;
    __nv_bfloat16* yr = y + (size_t)row * cols;
    const bool vec_ok = cols % 8 == 0 && (((uintptr_t)x | (uintptr_t)y | (uintptr_t)weight |
                                           (uintptr_t)bias) % 16) == 0;
    float s = 0.0f;
    int k = lane;
    while (k < cols) {
        s += __bfloat162float(xr[k]);
        k += 32;
    }
    float total = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        total += __bfloat162float(xr[c]);
    }
    for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(FULL, total, o);
    const float mu = total / cols;
    float sq = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float d = __bfloat162float(xr[c]) - mu;
        sq = fmaf(d, d, sq);
    }
    for (int o = 16; o > 0; o >>= 1) sq += __shfl_xor_sync(FULL, sq, o);
    const float rs = rsqrtf(sq / cols + eps);
    if (lane == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    if (vec_ok) {
        const uint4* xv = reinterpret_cast<const uint4*>(xr);
        const int nv = cols / 8;
#pragma unroll 4
        for (int c = lane; c < nv; c += 32) {
            float v[8];
            float vw[8];
            float vb[8];
            bf16x8_to_float(xv[c], v);
            bf16x8_to_float(reinterpret_cast<const uint4*>(weight)[c], vw);
            bf16x8_to_float(reinterpret_cast<const uint4*>(bias)[c], vb);
            uint4 packed;
            __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                h[j] = __floats2bfloat162_rn((v[2 * j] - mu) * rs * vw[2 * j] + vb[2 * j], (v[2 * j + 1] - mu) * rs * vw[2 * j + 1] + vb[2 * j + 1]);
            }
            reinterpret_cast<uint4*>(yr)[c] = packed;
        }
    } else {
        for (int c = lane; c < cols; c += 32) {
            yr[c] = __float2bfloat16((__bfloat162float(xr[c]) - mu) * rs * __bfloat162float(weight[c]) +
                                     __bfloat162float(bias[c]));
        }
    }
}
