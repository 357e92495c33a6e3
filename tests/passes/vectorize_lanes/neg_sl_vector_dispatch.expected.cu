// RUN: kltrans opt -p 'scalarize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: vector-dispatch: the else branch is not a single loop
// The fallback does more than the lane loop: the vector path is not its whole alternative.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    float r[4];
    if (vec_ok) {
        if (base < n) {
            const float4 t = *reinterpret_cast<const float4*>(x + base);
            r[0] = t.x;
            r[1] = t.y;
            r[2] = t.z;
            r[3] = t.w;
        } else {
            r[0] = r[1] = r[2] = r[3] = 0.0f;
        }
    } else {
        for (int j = 0; j < 4; ++j) {
            r[j] = base + j < n ? x[base + j] : 0.0f;
        }
        r[0] += 1.0f;
    }
    if (base < n) y[base] = a * r[0] + b;
}
