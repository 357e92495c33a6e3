// RUN: kltrans opt -p 'grow-block{threads=64}'
// CHECK-SKIP: block-size: is not more
// kltrans: launch scale grid=ceil_div(n, 128) block=128
__global__ void scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
