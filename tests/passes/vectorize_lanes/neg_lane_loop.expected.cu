// RUN: kltrans opt -p 'vectorize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: lane-loop: uses j other than in a bound
// The lane condition tests j itself (j < 3), not IDX + j < LEN: one vector bound check
// would not be the same as the per-lane checks.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    float r[4];
    for (int j = 0; j < 4; ++j) {
        r[j] = base + j < n && j < 3 ? x[base + j] : 0.0f;
    }
    y[base] = a * r[0] + b;
}
