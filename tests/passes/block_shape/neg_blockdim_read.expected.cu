// RUN: kltrans opt -p 'unflatten-block{fast=x}'
// CHECK-SKIP: block-shape: reads blockDim.x
// blockDim.x is the whole block here; on a 2-D block it would be one row.
// kltrans: launch fill grid=ceil_div(n, 128) block=128
__global__ void fill(float* y, int n)
{
    int i = blockIdx.x * blockDim.x + (threadIdx.x / 4) * 4 + threadIdx.x % 4;
    if (i < n) y[i] = 1.0f;
}
