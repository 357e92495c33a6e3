// RUN: kltrans opt -p 'flatten-block{fast=y}'
// ROUNDTRIP: model: the flattened kernel reads the block extents as constants (blockDim.x is the whole block there)
// A 2-D block walks the rows of a row-major matrix along threadIdx.x: the 16 threads of a
// row of the block read 16 rows of the matrix. Flattened with the columns fastest, a warp
// reads two runs of 16 neighbouring floats.
// kltrans: launch scale_rows grid=(ceil_div(rows, 16), ceil_div(cols, 16)) block=16*16
__global__ void scale_rows(const float* in, const float* s, float* out, int rows, int cols)
{
    int r = blockIdx.x * 16 + threadIdx.x / 16;
    int c = blockIdx.y * 16 + threadIdx.x % 16;
    if (r < rows && c < cols)
        out[r * cols + c] = in[r * cols + c] * s[r];
}
