// RUN: kltrans opt -p 'l2-prefetch' --arch sm_80
// CHECK-SKIP: bulk-prefetch-arch: sm_80 has no bulk-copy engine: the #if would compile the prefetch out
// kltrans: launch copy grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void copy(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
