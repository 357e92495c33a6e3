// RUN: kltrans opt -p 'flatten-block{fast=x}'
// CHECK-SKIP: block-shape: threadIdx.z
// kltrans: launch vol grid=ceil_div(n, 64) block=(8, 8)
__global__ void vol(float* y, int n)
{
    int i = blockIdx.x * 64 + threadIdx.y * 8 + threadIdx.x + threadIdx.z;
    if (i < n) y[i] = 0.5f * y[i];
}
