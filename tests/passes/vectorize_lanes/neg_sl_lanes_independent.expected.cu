// RUN: kltrans opt -p 'scalarize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: lanes-independent: may read what the store to y writes
// The stored values read y itself (an in-place stencil): the scalar lanes would see the
// lanes stored before them, the vector store does not.
// kltrans: launch smooth grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void smooth(float* y, float a, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (n & 3) == 0 && ((uintptr_t)y & 15) == 0;
    if (vec_ok) {
        if (base < n) {
            float4 t;
            t.x = a * y[base + 0 + 1];
            t.y = a * y[base + 1 + 1];
            t.z = a * y[base + 2 + 1];
            t.w = a * y[base + 3 + 1];
            *reinterpret_cast<float4*>(y + base) = t;
        }
    } else {
        for (int j = 0; j < 4; ++j) {
            if (base + j < n) {
                y[base + j] = a * y[base + j + 1];
            }
        }
    }
}
