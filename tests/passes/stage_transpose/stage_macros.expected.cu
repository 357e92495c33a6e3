// RUN: kltrans opt -p 'stage-transpose{tile=64,tile_name=TILE_DIM,bx_name=BLOCK_X,by_name=BLOCK_Y,smem=s_tile,row_step=k,col_step=m}'
// GATE: corpus/transpose
// Macros for the tile and the block, __restrict__ parameters (no context fact needed),
// const indices declared y first and spelled blockDim * blockIdx + threadIdx. A 64 x 64
// tile staged by a 32 x 8 block: 16 elements per thread.
// kltrans: launch transpose grid=(CEIL_DIV(cols, 64), CEIL_DIV(rows, 64)) block=(32, 8)
#define TILE_DIM 64
#define BLOCK_X 32
#define BLOCK_Y 8
extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out,
                                     int rows, int cols)
{
    __shared__ float s_tile[TILE_DIM][TILE_DIM];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int r0 = blockIdx.y * TILE_DIM;
    const int c0 = blockIdx.x * TILE_DIM;

    for (int k = 0; k < TILE_DIM; k += BLOCK_Y) {
        for (int m = 0; m < TILE_DIM; m += BLOCK_X) {
            const int row = r0 + ty + k;
            const int col = c0 + tx + m;
            if (row < rows && col < cols) {
                s_tile[ty + k][tx + m] = in[(long long)row * cols + col];
            }
        }
    }
    __syncthreads();

    for (int k = 0; k < TILE_DIM; k += BLOCK_Y) {
        for (int m = 0; m < TILE_DIM; m += BLOCK_X) {
            const int orow = c0 + ty + k;
            const int ocol = r0 + tx + m;
            if (orow < cols && ocol < rows) {
                out[(long long)orow * rows + ocol] = s_tile[tx + m][ty + k];
            }
        }
    }
}
