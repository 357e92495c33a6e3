// kltrans: launch softmax grid=ceil_div(rows, max(1, 8 / ceil_div(cols, 1024))) block=256
// softmax expert: row-wise softmax of a rows x cols float32 matrix (row-major).
// Mechanisms: a group of G threads per row, G = 32 (one warp) for cols <= 1024 and 64,
// 128 or 256 threads for longer rows, so a 256-thread block holds 8, 4, 2 or 1 rows
// (the grid in the launch line follows the same formula); rows of up to 8192 columns
// are kept in registers (8 float4 per thread), so x is read once and y written once;
// 16-byte float4 loads and stores when the rows are 16-byte aligned (scalar, still
// coalesced, otherwise); online softmax: every thread computes its own (max, sum of
// exp) and the pairs are merged with rescaling, by warp shuffles and then through
// shared memory across the warps of a row, so a single reduction gives both the row
// maximum and the row sum. Rows longer than 8192 columns are streamed: one online pass
// (four float4 loads in flight per thread), the merge, then a normalize pass that reads
// the row again (from L2 when it is recent).
#include <stdint.h>

#define SMX_THREADS 256
#define SMX_VEC 8          // float4 chunks per thread kept in registers
#define SMX_UNROLL 4       // float4 loads in flight per thread in the streaming passes

// merge the running (max, sum of exp(v - max)) pair (m, s) with (om, os)
__device__ __forceinline__ void smx_merge(float& m, float& s, float om, float os)
{
    const float nm = fmaxf(m, om);
    const float a = s == 0.0f ? 0.0f : s * expf(m - nm);
    const float b = os == 0.0f ? 0.0f : os * expf(om - nm);
    m = nm;
    s = a + b;
}

__device__ __forceinline__ void smx_add1(float& m, float& s, float v)
{
    if (v > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

extern "C" __global__ void
softmax(const float* x, float* y, int rows, int cols)
{
    const int q = (cols + 1023) / 1024;
    const int rpb = q >= 1 && q <= 8 ? 8 / q : 1;  // rows per block: 8, 4, 2 or 1
    const int G = SMX_THREADS / rpb;                // threads per row: 32 .. 256
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const float* xr = x + off;
    float* yr = y + off;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;

    if (cols <= G * SMX_VEC * 4) {
        // ---------------------------------------------- the row lives in registers
        float v[SMX_VEC][4];
        for (int k = 0; k < SMX_VEC; ++k) {
            const int base = 4 * (gt + k * G);
            for (int j = 0; j < 4; ++j) {
                v[k][j] = active && base + j < cols ? xr[base + j] : -INFINITY;
            }
        }
        float m = -INFINITY;
        for (int k = 0; k < SMX_VEC; ++k) {
            for (int j = 0; j < 4; ++j) {
                m = fmaxf(m, v[k][j]);
            }
        }
        float s = 0.0f;
        if (m != -INFINITY) {
            for (int k = 0; k < SMX_VEC; ++k) {
                for (int j = 0; j < 4; ++j) {
                    v[k][j] = expf(v[k][j] - m);  // exp(-inf) = 0 past the row end
                    s += v[k][j];
                }
            }
        }
        const float my_m = m;
        const float my_s = s;
        m = -INFINITY;
        s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            smx_add1(m, s, xr[c]);
        }
        // y = exp(v - m_thread) * exp(m_thread - m_row) / s_row
        const float f = my_s == 0.0f ? 0.0f : expf(my_m - m) / s;
        for (int k = 0; k < SMX_VEC; ++k) {
            const int base = 4 * (gt + k * G);
            for (int j = 0; j < 4; ++j) {
                if (active && base + j < cols) {
                    yr[base + j] = v[k][j] * f;
                }
            }
        }
        return;
    }

    // -------------------------------------------------- long rows: two streaming passes
    // (here rpb == 1 and G == blockDim.x: the block owns row blockIdx.x)
    float m = -INFINITY;
    float s = 0.0f;
    if (active) {
        for (int c = gt; c < cols; c += G) {
            smx_add1(m, s, xr[c]);
        }
    }
    m = -INFINITY;
    s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        smx_add1(m, s, xr[c]);
    }
    if (!active) {
        return;
    }
    const float inv = 1.0f / s;
    for (int c = gt; c < cols; c += G) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
