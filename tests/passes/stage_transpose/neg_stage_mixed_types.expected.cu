// RUN: kltrans opt -p 'stage-transpose' --assume 'no_alias(*)'
// CHECK-SKIP: element-type: the tile has one type
// The input holds float, the output double: one tile cannot stage both.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, double* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
    }
}
