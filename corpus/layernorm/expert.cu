// kltrans: launch layernorm grid=ceil_div(rows, max(1, 8 / ceil_div(cols, 1024))) block=256
// layernorm expert: per-row layer normalisation of a rows x cols bf16 matrix with bf16
// weight/bias, float32 statistics (mean[r], rstd[r] = 1/sqrt(var + eps)) and bf16 y.
// Mechanisms: a group of G threads per row, G = 32 (one warp) for cols <= 1024 and 64,
// 128 or 256 threads for longer rows, so a 256-thread block holds 8, 4, 2 or 1 rows
// (the grid in the launch line follows the same formula); rows of up to 8192 columns
// are kept in registers (4 chunks of 8 bf16 per thread, packed), so x is read once; 16-byte
// vector loads and stores (uint4 = 8 bf16) of x, weight, bias and y when cols is a
// multiple of 8 and the pointers are 16-byte aligned (scalar, still coalesced,
// otherwise); float32 statistics in two passes over the registers (mean, then the sum of
// squared deviations), each a warp-shuffle reduction followed, for groups of several
// warps, by a reduction through shared memory. Rows longer than 8192 columns are
// streamed twice: shifted sums (x - x[0]) and their squares, then the normalize pass.
#include <cuda_bf16.h>
#include <stdint.h>

#define LN_THREADS 256
#define LN_VEC 4  // 16-byte chunks (8 bf16 each) per thread kept in registers

// sum v over the G threads of a row group (every thread of the block calls it)
__device__ __forceinline__ float ln_group_sum(float v, int G, float* red)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, off);
    }
    if (G > 32) {  // uniform over the block: G depends on cols only
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
    }
    return v;
}

__device__ __forceinline__ void ln_unpack(uint4 raw, float* f)
{
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 t = __bfloat1622float2(h[j]);
        f[2 * j] = t.x;
        f[2 * j + 1] = t.y;
    }
}

extern "C" __global__ void __launch_bounds__(LN_THREADS)
layernorm(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ weight,
          const __nv_bfloat16* __restrict__ bias, __nv_bfloat16* __restrict__ y,
          float* __restrict__ mean, float* __restrict__ rstd, int rows, int cols, float eps)
{
    __shared__ float red[2][LN_THREADS / 32];

    const int q = (cols + 1023) / 1024;
    const int rpb = q >= 1 && q <= 8 ? 8 / q : 1;  // rows per block: 8, 4, 2 or 1
    const int G = LN_THREADS / rpb;                 // threads per row: 32 .. 256
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const __nv_bfloat16* __restrict__ xr = x + off;
    __nv_bfloat16* __restrict__ yr = y + off;
    const bool vec_ok = (cols & 7) == 0 &&
        (((uintptr_t)x | (uintptr_t)y | (uintptr_t)weight | (uintptr_t)bias) & 15u) == 0;
    const float inv_cols = 1.0f / (float)cols;

    if (cols <= G * LN_VEC * 8) {
        // ---------------------------------------------- the row lives in registers
        // (packed: 8 bf16 per uint4, unpacked to float32 on each use)
        uint4 raw[LN_VEC];
#pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {
            const int base = 8 * (gt + k * G);
            if (vec_ok) {
                raw[k] = active && base < cols
                    ? __ldg(reinterpret_cast<const uint4*>(xr + base))
                    : make_uint4(0u, 0u, 0u, 0u);
            } else {
                __nv_bfloat16* h = reinterpret_cast<__nv_bfloat16*>(&raw[k]);
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    h[j] = active && base + j < cols ? xr[base + j] : __float2bfloat16(0.0f);
                }
            }
        }
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {
            float f[8];
            ln_unpack(raw[k], f);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                s += f[j];  // zero past the row end
            }
        }
        const float mu = ln_group_sum(s, G, red[0]) * inv_cols;
        float sq = 0.0f;
#pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {
            const int base = 8 * (gt + k * G);
            float f[8];
            ln_unpack(raw[k], f);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const float d = base + j < cols ? f[j] - mu : 0.0f;
                sq += d * d;
            }
        }
        const float var = ln_group_sum(sq, G, red[1]) * inv_cols;
        const float rs = rsqrtf(var + eps);
        if (!active) {
            return;
        }
        if (gt == 0) {
            mean[row] = mu;
            rstd[row] = rs;
        }
#pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {
            const int base = 8 * (gt + k * G);
            float f[8];
            ln_unpack(raw[k], f);
            if (vec_ok) {
                if (base < cols) {
                    float w[8];
                    float b[8];
                    ln_unpack(__ldg(reinterpret_cast<const uint4*>(weight + base)), w);
                    ln_unpack(__ldg(reinterpret_cast<const uint4*>(bias + base)), b);
                    uint4 packed;
                    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const float a0 = (f[2 * j] - mu) * rs * w[2 * j] + b[2 * j];
                        const float a1 = (f[2 * j + 1] - mu) * rs * w[2 * j + 1] + b[2 * j + 1];
                        h[j] = __floats2bfloat162_rn(a0, a1);
                    }
                    *reinterpret_cast<uint4*>(yr + base) = packed;
                }
            } else {
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const int c = base + j;
                    if (c < cols) {
                        const float a = (f[j] - mu) * rs * __bfloat162float(weight[c]) +
                                        __bfloat162float(bias[c]);
                        yr[c] = __float2bfloat16(a);
                    }
                }
            }
        }
        return;
    }

    // ------------------------------------------ long rows (> 8192): two streaming passes
    // (here rpb == 1 and G == blockDim.x: the block owns row blockIdx.x, always < rows)
    const float shift = __bfloat162float(xr[0]);
    float s1 = 0.0f;
    float s2 = 0.0f;
    if (vec_ok) {
        const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(xr);
        const int nv = cols >> 3;
#pragma unroll 4
        for (int c = gt; c < nv; c += G) {
            float f[8];
            ln_unpack(__ldg(xv + c), f);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const float d = f[j] - shift;
                s1 += d;
                s2 += d * d;
            }
        }
    } else {
        for (int c = gt; c < cols; c += G) {
            const float d = __bfloat162float(xr[c]) - shift;
            s1 += d;
            s2 += d * d;
        }
    }
    s1 = ln_group_sum(s1, G, red[0]);
    s2 = ln_group_sum(s2, G, red[1]);
    const float dmu = s1 * inv_cols;
    const float mu = shift + dmu;
    const float var = fmaxf(s2 * inv_cols - dmu * dmu, 0.0f);
    const float rs = rsqrtf(var + eps);
    if (!active) {
        return;
    }
    if (gt == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    if (vec_ok) {
        const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(xr);
        const int nv = cols >> 3;
#pragma unroll 4
        for (int c = gt; c < nv; c += G) {
            float f[8];
            float w[8];
            float b[8];
            ln_unpack(__ldg(xv + c), f);
            ln_unpack(__ldg(reinterpret_cast<const uint4*>(weight) + c), w);
            ln_unpack(__ldg(reinterpret_cast<const uint4*>(bias) + c), b);
            uint4 packed;
            __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                h[j] = __floats2bfloat162_rn((f[2 * j] - mu) * rs * w[2 * j] + b[2 * j],
                                             (f[2 * j + 1] - mu) * rs * w[2 * j + 1] + b[2 * j + 1]);
            }
            reinterpret_cast<uint4*>(yr)[c] = packed;
        }
    } else {
        for (int c = gt; c < cols; c += G) {
            const float a = (__bfloat162float(xr[c]) - mu) * rs * __bfloat162float(weight[c]) +
                            __bfloat162float(bias[c]);
            yr[c] = __float2bfloat16(a);
        }
    }
}
