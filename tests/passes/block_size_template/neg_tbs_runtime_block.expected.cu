// RUN: kltrans opt -p 'template-block-size'
// CHECK-SKIP: launch: has no constant value
// The block size depends on n: no one instantiation serves every launch.
// kltrans: launch square_all grid=ceil_div(n, min(n, 256)) block=min(n, 256)
__global__ void square_all(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * x[i];
}
