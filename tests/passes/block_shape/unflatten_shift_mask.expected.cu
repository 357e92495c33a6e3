// RUN: kltrans opt -p 'unflatten-block{fast=y}'
// ROUNDTRIP: model: flatten-block writes the split as `/` and `%`, not as a shift and a mask
// GATE: tests/data/workloads/matcopy
// A split spelled with a shift and a mask, through a cast; `fast=y` puts the column in
// threadIdx.y (the naive, uncoalesced mapping).
// kltrans: launch copy_tile grid=(ceil_div(rows, 8), ceil_div(cols, 32)) block=(8, 32)
__global__ void copy_tile(const float* src, float* dst, int rows, int cols)
{
    int row = blockIdx.x * 8 + threadIdx.x;
    int col = blockIdx.y * 32 + threadIdx.y;
    if (row < rows && col < cols)
        dst[row * cols + col] = src[row * cols + col];
}
