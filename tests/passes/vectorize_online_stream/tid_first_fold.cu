// RUN: kltrans opt -p 'vectorize-online-stream{unroll=2,flag=aligned,add4=fold4,restrict=false}' --assume reassoc
// GATE: corpus/softmax
// threadIdx.x + blockDim.x * blockIdx.x, a flag spelled with %, two loads in flight,
// other helper names.
// kltrans: launch softmax grid=ceil_div(rows, 128) block=128
#include <stdint.h>

#define BLOCK 128

__device__ __forceinline__ void fold1(float& m, float& s, float v)
{
    if (v > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    const int r = threadIdx.x + blockDim.x * blockIdx.x;
    if (r >= rows) {
        return;
    }
    const float* xr = x + (size_t)r * cols;
    float* yr = y + (size_t)r * cols;
    const bool aligned = cols % 4 == 0 && ((uintptr_t)x % 16) == 0;
    float m = -INFINITY;
    float s = 0.0f;
    for (int c = 0; c < cols; c += 1) {
        fold1(m, s, xr[c]);
    }
    const float inv = 1.0f / s;
    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
