// RUN: kltrans opt -p 'stage-transpose{smem=rows}' --assume 'no_alias(*)'
// CHECK-SKIP: fresh-names: are already used
// The tile would be named `rows`, a parameter of the kernel.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
    }
}
