// RUN: kltrans opt -p 'scalarize-units' --assume 'no_alias(*)' --site 1
// CHECK-SKIP: vector-form: the then-branch is not the vector form
// The vector path loads through __ldg: another spelling than vectorize-units writes
// (drop-stream-hints first).
// kltrans: launch copy_units grid=ceil_div(n, BLOCK * UNITS * 4) block=BLOCK
#include <stdint.h>

#define BLOCK 256
#define UNITS 4

extern "C" __global__ void copy_units(const float* x, float* y, int n)
{
    const int tid = threadIdx.x;
    const int base = blockIdx.x * (BLOCK * UNITS * 4);
    const bool aligned = base + BLOCK * UNITS * 4 <= n &&
                         (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    float r[UNITS][4];
    if (aligned) {
        const float4* src = reinterpret_cast<const float4*>(x + base);
        for (int u = 0; u < UNITS; u++) {
            const float4 q = __ldg(src + u * BLOCK + tid);
            r[u][0] = q.x;
            r[u][1] = q.y;
            r[u][2] = q.z;
            r[u][3] = q.w;
        }
    } else {
        for (int u = 0; u < UNITS; u++) {
            for (int j = 0; j < 4; j++) {
                const int i = base + 4 * (u * BLOCK + tid) + j;
                r[u][j] = i < n ? x[i] : 0.0f;
            }
        }
    }
    if (aligned) {
        float4* dst = reinterpret_cast<float4*>(y + base);
        for (int u = 0; u < UNITS; u++) {
            float4 q;
            q.x = r[u][0];
            q.y = r[u][1];
            q.z = r[u][2];
            q.w = r[u][3];
            dst[u * BLOCK + tid] = q;
        }
    } else {
        for (int u = 0; u < UNITS; u++) {
            for (int j = 0; j < 4; j++) {
                const int i = base + 4 * (u * BLOCK + tid) + j;
                if (i < n) {
                    y[i] = r[u][j];
                }
            }
        }
    }
}
