// RUN: kltrans opt -p 'unflatten-block{fast=x}'
// ROUNDTRIP: model: flatten-block writes the split as `/` and `%` of threadIdx.x, not through the local
// The thread index held in a local and split by 8 into the column and row of an 8 x 16
// tile of the output; unflattened, the parts are threadIdx.x and threadIdx.y and the
// local goes.
// kltrans: launch add_bias grid=(ceil_div(cols, 8), ceil_div(rows, 16)) block=128
__global__ void add_bias(float* y, const float* bias, int rows, int cols)
{
    const int t = threadIdx.x;
    const int col = blockIdx.x * 8 + t % 8;
    const int row = blockIdx.y * 16 + t / 8;
    if (row < rows && col < cols)
        y[row * cols + col] += bias[col];
}
