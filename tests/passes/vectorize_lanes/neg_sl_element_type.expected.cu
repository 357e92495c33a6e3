// RUN: kltrans opt -p 'scalarize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: element-type: points to short
// short elements: no 4-lane vector type of them that the pass knows.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    const short* xs = reinterpret_cast<const short*>(x);
    float r[4];
    if (vec_ok) {
        if (base < n) {
            const short4 t = *reinterpret_cast<const short4*>(xs + base);
            r[0] = t.x;
            r[1] = t.y;
            r[2] = t.z;
            r[3] = t.w;
        } else {
            r[0] = r[1] = r[2] = r[3] = 0.0f;
        }
    } else {
        for (int j = 0; j < 4; ++j) {
            r[j] = base + j < n ? xs[base + j] : 0.0f;
        }
    }
    if (base < n) y[base] = a * r[0] + b;
}
