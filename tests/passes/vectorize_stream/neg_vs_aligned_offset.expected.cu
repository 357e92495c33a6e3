// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: aligned-offset: the offset `1` of xs from x is not a multiple of 4 or of a length the flag tests
// The input starts one element past the aligned parameter.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    const float* xs = x + 1;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * xs[i] + b;
    }
}
