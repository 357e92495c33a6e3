// RUN: kltrans opt -p 'stage-transpose{tile=16}' --assume 'no_alias(*)'
// CHECK-SKIP: tile-fits: is not covered by whole 32 x 8 blocks
// A 16 x 16 tile is narrower than the 32-thread rows of the block.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
    }
}
