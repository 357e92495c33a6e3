// RUN: kltrans opt -p 'flatten-block{fast=y}'
// CHECK-SKIP: same-results: does not do the same
// The helper reads threadIdx.y itself; the pass rewrites the kernel's body only, so the
// flattened kernel would write other elements (the grid machine sees it).
// kltrans: launch twice grid=(ceil_div(rows, 8), ceil_div(cols, 8)) block=(8, 8)
__device__ int column_of() { return blockIdx.y * 8 + threadIdx.y; }

__global__ void twice(float* y, int rows, int cols)
{
    int r = blockIdx.x * 8 + threadIdx.x;
    int c = column_of();
    if (r < rows && c < cols) y[r * cols + c] *= 2.0f;
}
