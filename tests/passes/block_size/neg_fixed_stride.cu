// RUN: kltrans opt -p 'grow-block{threads=256}'
// CHECK-SKIP: same-results: does not do the same
// The index is written with the block size 128: a block of 256 overlaps the next one.
// kltrans: launch scale grid=ceil_div(n, 128) block=128
__global__ void scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * 128 + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
