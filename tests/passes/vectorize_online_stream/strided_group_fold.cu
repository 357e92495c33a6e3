// RUN: kltrans opt -p 'vectorize-online-stream{unroll=STREAM_U}' --assume reassoc
// A row slice strided by a macro step from a named start: the float4 path strides
// over vectors the same way.
// kltrans: launch softmax grid=ceil_div(rows, 256) block=256
#include <stdint.h>

#define STREAM_U 8
#define STEP 1

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
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= rows) {
        return;
    }
    const float* xr = x + (size_t)gid * cols;
    float* yr = y + (size_t)gid * cols;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
    float m = -INFINITY;
    float s = 0.0f;
    const int first = 0;
    for (int c = first; c < cols; c += STEP) {
        smx_add1(m, s, xr[c]);
    }
    const float inv = 1.0f / s;
    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
