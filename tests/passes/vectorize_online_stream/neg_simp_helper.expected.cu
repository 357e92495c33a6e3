// RUN: kltrans opt -p 'scalarize-online-stream' --assume reassoc
// CHECK-SKIP: vector-form: is not the four-wide online-softmax fold
// The four-wide helper sums its exponentials in another order.
// kltrans: launch softmax grid=ceil_div(rows, 256) block=256
#include <stdint.h>

#define UNROLL 4

// add four values to a running (max, sum) pair
__device__ __forceinline__ void smx_add4(float& m, float& s, float4 v)
{
    const float mx = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (mx > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - mx);
        m = mx;
    }
    s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
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
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
    float m = -INFINITY;
    float s = 0.0f;
    if (vec_ok) {
        const float4* __restrict__ xv = reinterpret_cast<const float4*>(xr);
        const int nv = cols >> 2;
        int c = 0;
        for (; c + (UNROLL - 1) * 1 < nv; c += UNROLL * 1) {
            float4 t[UNROLL];
            for (int u = 0; u < UNROLL; ++u) {
                t[u] = xv[c + u * 1];
            }
            for (int u = 0; u < UNROLL; ++u) {
                smx_add4(m, s, t[u]);
            }
        }
        for (; c < nv; c += 1) {
            smx_add4(m, s, xv[c]);
        }
    } else {
        for (int c = 0; c < cols; c += 1) {
            smx_add1(m, s, xr[c]);
        }
    }
    const float inv = 1.0f / s;
    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
