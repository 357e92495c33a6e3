// RUN: kltrans opt -p 'stage-transpose{tile=64,tile_name=TILE}' --assume 'no_alias(*)'
// CHECK-SKIP: spelling: tile_name=TILE is 32, not 64
// The macro TILE is 32: it cannot spell a 64 x 64 tile.
#define TILE 32
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) {
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
    }
}
