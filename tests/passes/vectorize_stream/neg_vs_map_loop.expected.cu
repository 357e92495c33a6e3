// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: map-loop: the body is not one assignment `Y[i] = E;`
// An accumulating store (y[i] += ...) is not a map.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] += a * x[i] + b;
    }
}
