// RUN: kltrans opt -p 'vectorize-units{flag=full}' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// size_t index without const, threadIdx.x first in the unit, two alignment tests, a
// computed store value.
// kltrans: launch scale_units grid=ceil_div(n, 2048) block=128
#include <stdint.h>

#define UNITS 4

extern "C" __global__ void scale_units(const float* x, float* y, float a, float b, int n)
{
    const size_t first = (size_t)blockIdx.x * 2048;
    const bool full = ((uintptr_t)x & 15u) == 0 && ((uintptr_t)y & 15u) == 0 &&
                      first + 2048 <= n;
    float r[UNITS][4];
    if (full) {
        const float4* src = reinterpret_cast<const float4*>(x + first);
        for (int u = 0; u < UNITS; ++u) {
            const float4 t = src[threadIdx.x + u * 128];
            r[u][0] = t.x;
            r[u][1] = t.y;
            r[u][2] = t.z;
            r[u][3] = t.w;
        }
    } else {
        for (int u = 0; u < UNITS; ++u) {
            for (int c = 0; c < 4; ++c) {
                size_t e = first + 4 * (size_t)(threadIdx.x + u * 128) + c;
                r[u][c] = e < n ? x[e] : 0.0f;
            }
        }
    }
    if (full) {
        float4* dst = reinterpret_cast<float4*>(y + first);
        for (int u = 0; u < UNITS; ++u) {
            float4 t;
            t.x = a * r[u][0] + b;
            t.y = a * r[u][1] + b;
            t.z = a * r[u][2] + b;
            t.w = a * r[u][3] + b;
            dst[threadIdx.x + u * 128] = t;
        }
    } else {
        for (int u = 0; u < UNITS; ++u) {
            for (int c = 0; c < 4; ++c) {
                size_t e = first + 4 * (size_t)(threadIdx.x + u * 128) + c;
                if (e < n) {
                    y[e] = a * r[u][c] + b;
                }
            }
        }
    }
}
