// RUN: kltrans opt -p 'smem-reduce'
// CHECK-SKIP: whole-first: smx_group_merge is the group merge merge-row-stats writes
// The shuffles sit in the group merge helper merge-row-stats writes, which
// direct-row-stats removes whole once the fold loops are scalar: they stay shuffles.
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

// add four values to a running (max, sum) pair
__device__ __forceinline__ void smx_add4(float& m, float& s, float4 v)
{
    const float mx = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (mx > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - mx);
        m = mx;
    }
    s += (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
}

__device__ __forceinline__ void smx_add1(float& m, float& s, float v)
{
    if (v > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

// merge (m, s) over the G threads of a row group; every thread gets the row's pair.
// Called by every thread of the block (it may hold a barrier).
__device__ __forceinline__ void smx_group_merge(float& m, float& s, int G, float* red_m,
                                                float* red_s)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float om = __shfl_xor_sync(0xffffffffu, m, off);
        const float os = __shfl_xor_sync(0xffffffffu, s, off);
        smx_merge(m, s, om, os);
    }
    if (G > 32) {  // uniform over the block: G depends on cols only
        const int warp = threadIdx.x >> 5;
        if ((threadIdx.x & 31) == 0) {
            red_m[warp] = m;
            red_s[warp] = s;
        }
        __syncthreads();
        const int W = G >> 5;
        const int first = (warp / W) * W;
        m = red_m[first];
        s = red_s[first];
        for (int w = 1; w < W; ++w) {
            smx_merge(m, s, red_m[first + w], red_s[first + w]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(SMX_THREADS)
softmax(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
    __shared__ float red_m[SMX_THREADS / 32];
    __shared__ float red_s[SMX_THREADS / 32];

    const int q = (cols + 1023) / 1024;
    const int rpb = q >= 1 && q <= 8 ? 8 / q : 1;  // rows per block: 8, 4, 2 or 1
    const int G = SMX_THREADS / rpb;                // threads per row: 32 .. 256
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const float* __restrict__ xr = x + off;
    float* __restrict__ yr = y + off;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;

    if (cols <= G * SMX_VEC * 4) {
        // ---------------------------------------------- the row lives in registers
        float v[SMX_VEC][4];
#pragma unroll
        for (int k = 0; k < SMX_VEC; ++k) {
            const int base = 4 * (gt + k * G);
            if (vec_ok) {
                if (active && base < cols) {
                    const float4 t = __ldg(reinterpret_cast<const float4*>(xr + base));
                    v[k][0] = t.x;
                    v[k][1] = t.y;
                    v[k][2] = t.z;
                    v[k][3] = t.w;
                } else {
                    v[k][0] = v[k][1] = v[k][2] = v[k][3] = -INFINITY;
                }
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    v[k][j] = active && base + j < cols ? __ldg(xr + base + j) : -INFINITY;
                }
            }
        }
        float m = -INFINITY;
#pragma unroll
        for (int k = 0; k < SMX_VEC; ++k) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                m = fmaxf(m, v[k][j]);
            }
        }
        float s = 0.0f;
        if (m != -INFINITY) {
#pragma unroll
            for (int k = 0; k < SMX_VEC; ++k) {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    v[k][j] = expf(v[k][j] - m);  // exp(-inf) = 0 past the row end
                    s += v[k][j];
                }
            }
        }
        const float my_m = m;
        const float my_s = s;
        smx_group_merge(m, s, G, red_m, red_s);
        // y = exp(v - m_thread) * exp(m_thread - m_row) / s_row
        const float f = my_s == 0.0f ? 0.0f : expf(my_m - m) / s;
#pragma unroll
        for (int k = 0; k < SMX_VEC; ++k) {
            const int base = 4 * (gt + k * G);
            if (vec_ok) {
                if (active && base < cols) {
                    float4 t;
                    t.x = v[k][0] * f;
                    t.y = v[k][1] * f;
                    t.z = v[k][2] * f;
                    t.w = v[k][3] * f;
                    *reinterpret_cast<float4*>(yr + base) = t;
                }
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (active && base + j < cols) {
                        yr[base + j] = v[k][j] * f;
                    }
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
        if (vec_ok) {
            const float4* __restrict__ xv = reinterpret_cast<const float4*>(xr);
            const int nv = cols >> 2;
            int c = gt;
            for (; c + (SMX_UNROLL - 1) * G < nv; c += SMX_UNROLL * G) {
                float4 t[SMX_UNROLL];
#pragma unroll
                for (int u = 0; u < SMX_UNROLL; ++u) {
                    t[u] = __ldg(xv + c + u * G);
                }
#pragma unroll
                for (int u = 0; u < SMX_UNROLL; ++u) {
                    smx_add4(m, s, t[u]);
                }
            }
            for (; c < nv; c += G) {
                smx_add4(m, s, __ldg(xv + c));
            }
        } else {
            for (int c = gt; c < cols; c += G) {
                smx_add1(m, s, __ldg(xr + c));
            }
        }
    }
    smx_group_merge(m, s, G, red_m, red_s);
    if (!active) {
        return;
    }
    const float inv = 1.0f / s;
    if (vec_ok) {
        const float4* __restrict__ xv = reinterpret_cast<const float4*>(xr);
        float4* __restrict__ yv = reinterpret_cast<float4*>(yr);
        const int nv = cols >> 2;
        int c = gt;
        for (; c + (SMX_UNROLL - 1) * G < nv; c += SMX_UNROLL * G) {
            float4 t[SMX_UNROLL];
#pragma unroll
            for (int u = 0; u < SMX_UNROLL; ++u) {
                t[u] = __ldg(xv + c + u * G);
            }
#pragma unroll
            for (int u = 0; u < SMX_UNROLL; ++u) {
                float4 o;
                o.x = expf(t[u].x - m) * inv;
                o.y = expf(t[u].y - m) * inv;
                o.z = expf(t[u].z - m) * inv;
                o.w = expf(t[u].w - m) * inv;
                yv[c + u * G] = o;
            }
        }
        for (; c < nv; c += G) {
            const float4 t = __ldg(xv + c);
            float4 o;
            o.x = expf(t.x - m) * inv;
            o.y = expf(t.y - m) * inv;
            o.z = expf(t.z - m) * inv;
            o.w = expf(t.w - m) * inv;
            yv[c] = o;
        }
    } else {
        for (int c = gt; c < cols; c += G) {
            yr[c] = expf(__ldg(xr + c) - m) * inv;
        }
    }
}
