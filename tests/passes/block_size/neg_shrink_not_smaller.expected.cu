// RUN: kltrans opt -p 'shrink-block{threads=256}'
// CHECK-SKIP: block-size: is not fewer
// kltrans: launch scale grid=ceil_div(n, 128) block=128
__global__ void scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
