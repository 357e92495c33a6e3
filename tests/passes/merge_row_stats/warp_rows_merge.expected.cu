// RUN: kltrans opt -p 'merge-row-stats' --assume reassoc --assume 'no_alias(*)'
// GATE: corpus/softmax
// A warp per row (8 rows of a 256-thread block): every thread folds its strided
// slice, then the whole row again; the second fold becomes the group merge.
// kltrans: launch softmax grid=ceil_div(rows, 8) block=256
#include <stdint.h>

#define SMX_THREADS 256

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

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    __shared__ float red_m[SMX_THREADS / 32];
    __shared__ float red_s[SMX_THREADS / 32];

    const int G = SMX_THREADS / 8;
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * 8 + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const float* xr = x + off;
    float* yr = y + off;
    float m = -INFINITY;
    float s = 0.0f;
    for (int c = gt; c < cols; c += G) {
        smx_add1(m, s, xr[c]);
    }
    smx_group_merge(m, s, G, red_m, red_s);
    if (!active) {
        return;
    }
    const float inv = 1.0f / s;
    for (int c = gt; c < cols; c += G) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
