// RUN: kltrans opt -p 'vectorize-stream{unroll=UNROLL}' --assume 'no_alias(*)' --site 1
// GATE: corpus/softmax
// One block per row; every thread takes the row's max and sum itself, then the
// normalize loop (block-strided over the row) gets a float4 path with UNROLL vectors in
// flight per thread (the reduction loops are not strided maps).
// kltrans: launch softmax grid=rows block=128
#include <stdint.h>
#define UNROLL 4

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    const int row = blockIdx.x;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const bool vec_ok = (cols & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15u) == 0;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) {
        m = fmaxf(m, xr[c]);
    }
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += expf(xr[c] - m);
    }
    const float inv = 1.0f / s;
    if (vec_ok) {
        const float4* xv = reinterpret_cast<const float4*>(xr);
        float4* yv = reinterpret_cast<float4*>(yr);
        const int nv = cols >> 2;
        int c = threadIdx.x;
        for (; c + (UNROLL - 1) * blockDim.x < nv; c += UNROLL * blockDim.x) {
            float4 t[UNROLL];
            for (int u = 0; u < UNROLL; ++u) {
                t[u] = xv[c + u * blockDim.x];
            }
            for (int u = 0; u < UNROLL; ++u) {
                float4 o;
                o.x = expf(t[u].x - m) * inv;
                o.y = expf(t[u].y - m) * inv;
                o.z = expf(t[u].z - m) * inv;
                o.w = expf(t[u].w - m) * inv;
                yv[c + u * blockDim.x] = o;
            }
        }
        for (; c < nv; c += blockDim.x) {
            const float4 t = xv[c];
            float4 o;
            o.x = expf(t.x - m) * inv;
            o.y = expf(t.y - m) * inv;
            o.z = expf(t.z - m) * inv;
            o.w = expf(t.w - m) * inv;
            yv[c] = o;
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            yr[c] = expf(xr[c] - m) * inv;
        }
    }
}
