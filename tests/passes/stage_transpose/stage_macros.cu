// RUN: kltrans opt -p 'stage-transpose{tile=64,tile_name=TILE_DIM,bx_name=BLOCK_X,by_name=BLOCK_Y,smem=s_tile,row_step=k,col_step=m}'
// GATE: corpus/transpose
// Macros for the tile and the block, __restrict__ parameters (no context fact needed),
// const indices declared y first and spelled blockDim * blockIdx + threadIdx. A 64 x 64
// tile staged by a 32 x 8 block: 16 elements per thread.
// kltrans: launch transpose grid=(CEIL_DIV(cols, 32), CEIL_DIV(rows, 8)) block=(32, 8)
#define TILE_DIM 64
#define BLOCK_X 32
#define BLOCK_Y 8
extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out,
                                     int rows, int cols)
{
    const int row = blockDim.y * blockIdx.y + threadIdx.y;
    const int col = blockDim.x * blockIdx.x + threadIdx.x;
    if (row < rows && col < cols) {
        out[(long long)col * rows + row] = in[(long long)row * cols + col];
    }
}
