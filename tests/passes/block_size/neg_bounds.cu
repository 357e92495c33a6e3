// RUN: kltrans opt -p 'grow-block{threads=512}'
// CHECK-SKIP: launch-bounds: allows at most 256
// kltrans: launch scale grid=ceil_div(n, 128) block=128
__global__ void __launch_bounds__(256) scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
