// RUN: kltrans opt -p 'flatten-block{fast=y}'
// CHECK-SKIP: block-shape: is not 2-D
// kltrans: launch neg1 grid=ceil_div(n, 256) block=256
__global__ void neg1(float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = -y[i];
}
