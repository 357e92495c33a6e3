// RUN: kltrans opt -p 'vectorize-lanes' --assume 'no_alias(*)'
// CHECK-SKIP: lanes-independent: not a local register array
// The lanes are loaded into y itself (a pointer, not a register array): with y
// aliasing x the order of the lane loads and stores would matter.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

__global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    for (int j = 0; j < 4; ++j) {
        y[j] = base + j < n ? x[base + j] : 0.0f;
    }
}
