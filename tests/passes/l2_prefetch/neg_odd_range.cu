// RUN: kltrans opt -p 'l2-prefetch'
// CHECK-SKIP: sixteen-byte-range: a block's range is 1000 bytes, not a multiple of 16 (the bulk prefetch needs 16-byte sizes and addresses)
// 250 threads per block: 1000-byte ranges.
// kltrans: launch copy grid=ceil_div(n, 250) block=250
#include <stdint.h>

extern "C" __global__ void copy(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
