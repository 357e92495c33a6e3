// RUN: kltrans opt -p 'direct-row-stats' --assume reassoc --assume 'no_alias(*)'
// GATE: corpus/softmax
// What merge-row-stats writes: the merge becomes a direct fold of the row; it was
// the last call, so the helper and the shared warp pairs go too.
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

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
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
