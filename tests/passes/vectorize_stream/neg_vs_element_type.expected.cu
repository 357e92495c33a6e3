// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: element-type: x points to short: no 16-byte vector type of it
// 16-bit elements: no vector type in the table (8 of them would need a packed uint4).
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
#include <stdint.h>

extern "C" __global__ void scale_s(const short* x, short* y, short a, short b, int n)
{
    const bool vec_ok = (n & 3) == 0 && (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + b;
    }
}
