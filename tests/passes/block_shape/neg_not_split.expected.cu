// RUN: kltrans opt -p 'unflatten-block{fast=x}'
// CHECK-SKIP: block-shape: reads the thread index other than split
// The global index reads threadIdx.x whole: there is no row and column to give the axes.
// kltrans: launch axpy grid=ceil_div(n, 256) block=256
__global__ void axpy(float a, const float* x, float* y, int n)
{
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
