// RUN: kltrans opt -p 'template-block-size'
// CHECK-SKIP: launch: never reads blockDim.x
// The kernel writes its block size as a literal: there is no run-time read to replace.
// kltrans: launch negate_all grid=ceil_div(n, 256) block=256
__global__ void negate_all(const float* x, float* y, int n)
{
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n)
        y[i] = -x[i];
}
