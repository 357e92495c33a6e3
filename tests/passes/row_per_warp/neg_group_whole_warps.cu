// RUN: kltrans opt -p 'row-per-warp{group=cols,threads=96}'
// CHECK-SKIP: whole-warps: is not 32 times a power of two
// A 96-thread block cannot be cut into equal row groups for every length.
// kltrans: launch softmax grid=ceil_div(rows, 96) block=96
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
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const float* xr = x + off;
    float* yr = y + off;
    float m = -INFINITY;
    float s = 0.0f;
    if (active) {
        for (int c = 0; c < cols; ++c) {
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
    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
