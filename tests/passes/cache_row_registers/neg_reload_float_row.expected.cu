// RUN: kltrans opt -p 'reload-row' --assume reassoc --assume 'no_alias(*)'
// CHECK-SKIP: float-row: is not a float pointer
// The output row is reached through a double pointer.
// kltrans: launch softmax grid=ceil_div(rows, max(1, 8 / ceil_div(cols, 1024))) block=256
#include <stdint.h>

#define SMX_THREADS 256
#define SMX_VEC 8

__device__ __forceinline__ void smx_add1(float& m, float& s, float v)
{
    if (v > m) {
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }
    s += expf(v - m);
}

extern "C" __global__ void softmax(const float* x, double* y, int rows, int cols)
{
    const int q = (cols + 1023) / 1024;
    const int rpb = q >= 1 && q <= 8 ? 8 / q : 1;
    const int G = SMX_THREADS / rpb;
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;
    const bool active = row < rows;
    const size_t off = active ? (size_t)row * (size_t)cols : 0;
    const float* xr = x + off;
    double* yr = y + off;

    if (cols <= G * SMX_VEC * 4) {
        // ---------------------------------------------- the row lives in registers
        float v[SMX_VEC][4];
        for (int k = 0; k < SMX_VEC; ++k) {
            const int base = 4 * (gt + k * G);
            for (int j = 0; j < 4; ++j) {
                v[k][j] = active && base + j < cols ? xr[base + j] : -INFINITY;
            }
        }
        float m = -INFINITY;
        for (int k = 0; k < SMX_VEC; ++k) {
            for (int j = 0; j < 4; ++j) {
                m = fmaxf(m, v[k][j]);
            }
        }
        float s = 0.0f;
        if (m != -INFINITY) {
            for (int k = 0; k < SMX_VEC; ++k) {
                for (int j = 0; j < 4; ++j) {
                    v[k][j] = expf(v[k][j] - m);  // exp(-inf) = 0 past the row end
                    s += v[k][j];
                }
            }
        }
        const float my_m = m;
        const float my_s = s;
        m = -INFINITY;
        s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            smx_add1(m, s, xr[c]);
        }
        // y = exp(v - m_thread) * exp(m_thread - m_row) / s_row
        const float f = my_s == 0.0f ? 0.0f : expf(my_m - m) / s;
        for (int k = 0; k < SMX_VEC; ++k) {
            const int base = 4 * (gt + k * G);
            for (int j = 0; j < 4; ++j) {
                if (active && base + j < cols) {
                    yr[base + j] = v[k][j] * f;
                }
            }
        }
        return;
    }

    // every thread folds its slice, then the whole row
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
    for (int c = gt; c < cols; c += G) {
        yr[c] = expf(xr[c] - m) * inv;
    }
}
