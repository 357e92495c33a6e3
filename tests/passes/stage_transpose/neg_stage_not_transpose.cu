// RUN: kltrans opt -p 'stage-transpose' --assume 'no_alias(*)'
// CHECK-SKIP: naive-transpose: is not a transpose
// A copy, not a transpose: the output index is the input index, no tile is needed.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        out[(size_t)y * cols + x] = in[(size_t)y * cols + x];
    }
}
