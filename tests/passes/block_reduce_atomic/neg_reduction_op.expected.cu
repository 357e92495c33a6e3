// RUN: kltrans opt -p 'block-reduce-atomic' --assume reassoc
// CHECK-SKIP: reduction-op: the pass knows int, unsigned
// A half-precision sum: the pass has no identity or shuffle plan for __half.
#include <cuda_fp16.h>
// kltrans: launch sum_half grid=ceil_div(n, 256) block=256
extern "C" __global__ void sum_half(const __half* x, __half* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);
}
