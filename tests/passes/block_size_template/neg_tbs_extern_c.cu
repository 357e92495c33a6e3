// RUN: kltrans opt -p 'template-block-size'
// CHECK-SKIP: linkage: C linkage
// A kernel with C linkage cannot be a template.
// kltrans: launch shift_all grid=ceil_div(n, 256) block=256
extern "C" __global__ void shift_all(const float* x, float* y, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] + b;
}
