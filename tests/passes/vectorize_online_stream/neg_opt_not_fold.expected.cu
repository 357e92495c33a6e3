// RUN: kltrans opt -p 'vectorize-online-stream' --assume reassoc
// CHECK-SKIP: fold-form: not a strided online fold
// The loop is a plain max, not the online fold.
// kltrans: launch softmax grid=ceil_div(rows, 256) block=256
#include <stdint.h>

#define UNROLL 4

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
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
    float m = -INFINITY;
    float s = 0.0f;
    for (int c = 0; c < cols; c += 1) {
        m = fmaxf(m, xr[c]);
    }
    const float inv = 1.0f / s;
    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
