// RUN: kltrans opt -p 'vectorize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: element-type: points to char
// The elements are chars: 4 chars are not one vector type the pass knows (char4 would
// also be a 4-byte access, not a 16-byte one).
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    const char* c = reinterpret_cast<const char*>(x);
    float r[4];
    for (int j = 0; j < 4; ++j) {
        r[j] = base + j < n ? c[base + j] : 0.0f;
    }
    y[base / 4] = a * r[0] + b;
}
