// kltrans: launch layernorm grid=ceil_div(rows, max(1, 4 / ceil_div(cols, 4096))) block=128
// layernorm expert: per-row layer normalisation of a rows x cols bf16 matrix with bf16
// weight/bias, float32 statistics (mean[r], rstd[r] = 1/sqrt(var + eps)) and bf16 y.
// Mechanisms: every thread keeps up to 16 chunks of 8 bf16 (16 uint4, packed) of its row
// in registers, so x is read exactly once. A group of G threads per row: G = 32 (one
// warp per row, 4 independent rows per 128-thread block) for cols <= 4096; that path
// uses no shared memory and no __syncthreads at all, only warp shuffles, so every warp
// runs its load / reduce / store phases independently; 4 blocks per SM
// (__launch_bounds__(128, 4), <= 128 registers, no spills) keep 16 rows (128 KiB of x
// at cols = 4096) in flight per SM, and small blocks retire (and are replaced) without
// waiting for many slower rows. Longer rows take G = 64 or 128 threads (2 or 1 rows per
// block; the grid in the launch line follows the same formula: rows per block =
// max(1, 4 / ceil(cols / 4096))) and add a shared-memory step to the reductions. All
// 16-byte loads of a thread's row slice are issued before any is used (streaming
// __ldcs: x is read once); weight and bias (shared by all rows, cache-resident) are
// read with __ldg; y is written with 16-byte streaming stores (__stcs), mean/rstd by
// the row's first thread. Statistics: float32, two passes over the registers (mean,
// then the sum of squared deviations: no cancellation), each pass unpacking the bf16
// pairs with a differently spelled (bit-identical) conversion so the compiler keeps the
// 64 packed words live rather than 128 unpacked floats. The vector path needs
// cols % 8 == 0 and 16-byte aligned pointers; otherwise a scalar, coalesced,
// bounds-checked three-pass path (mean, squared deviations, normalize; x re-read from
// cache). Vector rows longer than 16 * 8 * 128 = 16384 columns are streamed twice
// (shifted sums, then normalize).
// L2 prefetch: on sm_90 thread 0 of each block asks the bulk-copy engine to pull the rows
// of the block 132 blocks ahead into L2 (cp.async.bulk.prefetch.L2; the rows of a block are
// contiguous, rpb * cols * 2 bytes, a multiple of 16 on the vector path): 0.306 -> 0.295 ms
// on the H200 (bench/results/bench_corpus_tuning.txt).
#include <cuda_bf16.h>
#include <stdint.h>

#define LN_THREADS 128
#define LN_VEC 16  // 16-byte chunks (8 bf16 each) per thread kept in registers
#define LN_ROW_WARP 4096  // columns handled by one warp (32 * LN_VEC * 8)
#define LN_PREFETCH 132   // blocks ahead for the L2 prefetch (tuned: 66-264 equal, 1056: 26% slower)

__device__ __forceinline__ float ln_warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) {
        __shared__ float warp_slots[1024];
        const unsigned int slot = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        warp_slots[slot] = v;
        __syncwarp();
        v += warp_slots[slot ^ off];
        __syncwarp();
    }
    return v;
}

// sum v over the G threads of a row group, G a multiple of 64 (every thread of the block
// calls it)
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

// bf16 pairs to float32. Three bit-equivalent spellings (shift/mask, byte permute, mask
// after shift), one per pass over the packed registers, so that the compiler cannot
// share the unpacked floats between passes (that would keep 128 floats per thread live
// instead of 64 packed words and spill).
template <int FORM>
__device__ __forceinline__ void ln_unpack(uint4 raw, float* f)
{
    const unsigned int w[4] = {raw.x, raw.y, raw.z, raw.w};
    for (int j = 0; j < 4; ++j) {
        if (FORM == 0) {
            f[2 * j] = __uint_as_float(w[j] << 16);
            f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
        } else if (FORM == 1) {
            f[2 * j] = __uint_as_float(__byte_perm(w[j], 0u, 0x1044));
            f[2 * j + 1] = __uint_as_float(__byte_perm(w[j], 0u, 0x3244));
        } else {
            const float2 t = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[j]));
            f[2 * j] = t.x;
            f[2 * j + 1] = t.y;
        }
    }
}

// One row per group of G threads, the row in registers, 16-byte vector accesses
// (cols % 8 == 0, aligned pointers). WARP: G == 32, shuffles only (the caller has
// already dropped inactive warps); otherwise every thread of the block takes part in the
// shared-memory reductions.
template <bool WARP>
__device__ __forceinline__ void ln_row_regs(const __nv_bfloat16* xr,
                                            const __nv_bfloat16* weight,
                                            const __nv_bfloat16* bias,
                                            __nv_bfloat16* yr,
                                            float* mean, float* rstd,
                                            int row, bool active, int cols, float eps,
                                            int G, int gt, float (*red)[LN_THREADS / 32])
{
    const float inv_cols = 1.0f / (float)cols;
    uint4 raw[LN_VEC];
    // all loads of the thread's slice first (chunk k covers columns 8 * (gt + k * G) + 0..7)
    for (int k = 0; k < LN_VEC; ++k) {
        const int base = 8 * (gt + k * G);
        raw[k] = active && base < cols
            ? *(reinterpret_cast<const uint4*>(xr + base))
            : make_uint4(0u, 0u, 0u, 0u);
    }
    // pass 1: mean (chunks past the row end are zero)
    float s = 0.0f;
    for (int k = 0; k < LN_VEC; ++k) {
        float f[8];
        ln_unpack<0>(raw[k], f);
        for (int j = 0; j < 8; ++j) {
            s += f[j];
        }
    }
    s = WARP ? ln_warp_sum(s) : ln_group_sum(s, G, red[0]);
    const float mu = s * inv_cols;
    // pass 2: sum of squared deviations over the chunks inside the row
    float sq = 0.0f;
    for (int k = 0; k < LN_VEC; ++k) {
        const int base = 8 * (gt + k * G);
        float f[8];
        ln_unpack<1>(raw[k], f);
        float part = 0.0f;
        for (int j = 0; j < 8; ++j) {
            const float d = f[j] - mu;
            part = d * d + part;
        }
        sq += base < cols ? part : 0.0f;
    }
    sq = WARP ? ln_warp_sum(sq) : ln_group_sum(sq, G, red[1]);
    const float rs = 1.0f / sqrtf(sq * inv_cols + eps);
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
        if (base < cols) {
            float f[8];
            float w[8];
            float b[8];
            ln_unpack<2>(raw[k], f);
            ln_unpack<2>(*(reinterpret_cast<const uint4*>(weight + base)), w);
            ln_unpack<2>(*(reinterpret_cast<const uint4*>(bias + base)), b);
            uint4 packed;
            __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float a0 = (f[2 * j] - mu) * rs * w[2 * j] + b[2 * j];
                const float a1 = (f[2 * j + 1] - mu) * rs * w[2 * j + 1] + b[2 * j + 1];
                h[j] = __floats2bfloat162_rn(a0, a1);
            }
            *(reinterpret_cast<uint4*>(yr + base)) = packed;
        }
    }
}

// Scalar path (cols % 8 != 0 or unaligned pointers), any cols: three coalesced,
// bounds-checked passes over the row (mean, squared deviations, normalize); the second
// and third re-read x from cache. Same grouping and reductions as the register path.
template <bool WARP>
__device__ __forceinline__ void ln_row_scalar(const __nv_bfloat16* xr,
                                              const __nv_bfloat16* weight,
                                              const __nv_bfloat16* bias,
                                              __nv_bfloat16* yr,
                                              float* mean, float* rstd,
                                              int row, bool active, int cols, float eps,
                                              int G, int gt, float (*red)[LN_THREADS / 32])
{
    const float inv_cols = 1.0f / (float)cols;
    const int n = active ? cols : 0;
    float s = 0.0f;
    for (int c = gt; c < n; c += G) {
        s += __bfloat162float(xr[c]);
    }
    s = WARP ? ln_warp_sum(s) : ln_group_sum(s, G, red[0]);
    const float mu = s * inv_cols;
    float sq = 0.0f;
    for (int c = gt; c < n; c += G) {
        const float d = __bfloat162float(xr[c]) - mu;
        sq = d * d + sq;
    }
    sq = WARP ? ln_warp_sum(sq) : ln_group_sum(sq, G, red[1]);
    const float rs = 1.0f / sqrtf(sq * inv_cols + eps);
    if (!active) {
        return;
    }
    if (gt == 0) {
        mean[row] = mu;
        rstd[row] = rs;
    }
    for (int c = gt; c < n; c += G) {
        const float a = (__bfloat162float(xr[c]) - mu) * rs * __bfloat162float(weight[c]) + __bfloat162float(bias[c]);
        yr[c] = __float2bfloat16(a);
    }
}

extern "C" __global__ void
layernorm(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ weight,
          const __nv_bfloat16* __restrict__ bias, __nv_bfloat16* __restrict__ y,
          float* __restrict__ mean, float* __restrict__ rstd, int rows, int cols, float eps)
{
    __shared__ float red[2][LN_THREADS / 32];

    const int q = (cols + LN_ROW_WARP - 1) / LN_ROW_WARP;
    const int rpb = q >= 1 && q <= 4 ? 4 / q : 1;  // rows per block: 4, 2 or 1
    const int G = LN_THREADS / rpb;                 // threads per row: 32 .. 128
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const __nv_bfloat16* __restrict__ xr = x + off;
    __nv_bfloat16* __restrict__ yr = y + off;
    const bool vec_ok = (cols & 7) == 0 &&
        (((uintptr_t)x | (uintptr_t)y | (uintptr_t)weight | (uintptr_t)bias) & 15u) == 0;
    // L2 prefetch (sm_90 bulk copy engine): the rows of the block LN_PREFETCH blocks ahead
    // are pulled into L2 by one instruction, so DRAM streams ahead of the register loads

    if (G == 32) {
        // ------------------------------------- one warp per row: shuffles only, no barrier
        if (!active) {
            return;  // whole warp: the row is per warp
        }
        if (vec_ok) {
            ln_row_regs<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);
        } else {
            ln_row_scalar<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);
        }
        return;
    }
    if (!vec_ok) {
        ln_row_scalar<false>(xr, weight, bias, yr, mean, rstd, row, active, cols, eps, G, gt, red);
        return;
    }
    if (cols <= G * LN_VEC * 8) {
        // ----------------------------- several warps per row, still in registers
        ln_row_regs<false>(xr, weight, bias, yr, mean, rstd, row, active, cols, eps, G, gt, red);
        return;
    }

    // ------------------------------------------ very long rows: two streaming passes
    // (here rpb == 1 and G == blockDim.x: the block owns row blockIdx.x, always < rows)
    const float inv_cols = 1.0f / (float)cols;
    const float shift = __bfloat162float(xr[0]);
    float s1 = 0.0f;
    float s2 = 0.0f;
    for (int c = gt; c < cols; c += G) {
        const float d = __bfloat162float(xr[c]) - shift;
        s1 += d;
        s2 += d * d;
    }
    s1 = ln_group_sum(s1, G, red[0]);
    s2 = ln_group_sum(s2, G, red[1]);
    const float dmu = s1 * inv_cols;
    const float mu = shift + dmu;
    const float var = fmaxf(s2 * inv_cols - dmu * dmu, 0.0f);
    const float rs = 1.0f / sqrtf(var + eps);
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
            ln_unpack<2>(xv[c], f);
            ln_unpack<2>(reinterpret_cast<const uint4*>(weight)[c], w);
            ln_unpack<2>(reinterpret_cast<const uint4*>(bias)[c], b);
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
