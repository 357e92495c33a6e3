// RUN: kltrans opt -p 'unflatten-block{fast=x}'
// CHECK-SKIP: block-shape: not one constant
// Split by 16 for the tile and by 32 for the warp: no single 2-D shape has both.
// kltrans: launch marks grid=ceil_div(n, 256) block=256
__global__ void marks(int* out, int n)
{
    int i = blockIdx.x * 256 + (threadIdx.x / 16) * 16 + threadIdx.x % 16;
    if (i < n) out[i] = threadIdx.x / 32;
}
