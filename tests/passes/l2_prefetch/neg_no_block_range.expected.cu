// RUN: kltrans opt -p 'l2-prefetch'
// CHECK-SKIP: block-range: no element index `i = blockIdx.x * blockDim.x + threadIdx.x` at the top of the kernel: give base=, len=, limit= and after=
// A grid-stride loop: no block owns one contiguous range.
// kltrans: launch copy grid=120 block=256
#include <stdint.h>

extern "C" __global__ void copy(const float* x, float* y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[i];
}
