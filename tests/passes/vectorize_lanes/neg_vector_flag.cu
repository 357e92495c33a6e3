// RUN: kltrans opt -p 'vectorize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: vector-flag: does not test that the bound n is a multiple of 4
// The flag tests only the alignment: with n % 4 != 0 the single check base < n would
// load lanes past the end of x.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    float r[4];
    for (int j = 0; j < 4; ++j) {
        r[j] = base + j < n ? x[base + j] : 0.0f;
    }
    if (base < n) y[base] = a * r[0] + b;
}
