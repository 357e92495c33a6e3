// RUN: kltrans opt -p 'unflatten-block{fast=x}'
// CHECK-SKIP: same-results: does not do the same
// The helper reads the flat index itself; the pass rewrites the kernel's body only, so on
// a 2-D block the helper would see a row's index (the grid machine sees it).
// kltrans: launch halves grid=ceil_div(n, 64) block=64
__device__ int slot() { return blockIdx.x * 64 + threadIdx.x; }

__global__ void halves(float* y, int n)
{
    int c = threadIdx.x % 8;
    int r = threadIdx.x / 8;
    if (slot() < n) y[slot()] = 0.5f * (float)(r * 8 + c);
}
