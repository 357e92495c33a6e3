// RUN: kltrans opt -p 'stage-transpose' --assume 'no_alias(*)'
// CHECK-SKIP: launch-2d: is not ceil_div(rows, 8)
// The grid's y dimension is `rows` blocks, not one thread per row: the header does not say
// how the threads cover the matrix.
// kltrans: launch transpose grid=(ceil_div(cols, 32), rows) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
    }
}
