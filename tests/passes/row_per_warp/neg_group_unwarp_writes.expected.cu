// RUN: kltrans opt -p 'row-per-thread'
// CHECK-SKIP: lane0-writes: is written outside the column loops
// Every thread of the group writes the first element.
// kltrans: launch softmax grid=ceil_div(rows, max(1, 8 / ceil_div(cols, 1024))) block=256
#include <stdint.h>

#define SMX_THREADS 256

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
    const int q = (cols + 1023) / 1024;
    const int rpb = q >= 1 && q <= 8 ? 8 / q : 1;  // rows per block
    const int G = SMX_THREADS / rpb;  // threads per row
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const float* xr = x + off;
    float* yr = y + off;
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
    yr[0] = 0.0f;
    for (int c = gt; c < cols; c += G) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
