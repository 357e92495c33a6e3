// RUN: kltrans opt -p 'l2-prefetch{array=x}'
// CHECK-SKIP: read-only-array: x is not a pointer to const: the kernel may write the range it would prefetch (a stale-line hint at best)
// kltrans: launch axpy grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void axpy(float* x, const float* y, float a, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) x[idx] += a * y[idx];
}
