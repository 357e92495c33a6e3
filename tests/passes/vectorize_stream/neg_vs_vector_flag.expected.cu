// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: vector-flag: `vec_ok` does not test that the length n is a multiple of 4
// The flag tests the alignment only: a ragged n would lose its tail.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const bool vec_ok = (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + b;
    }
}
