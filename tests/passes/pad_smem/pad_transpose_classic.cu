// RUN: kltrans opt -p 'pad-smem'
// GATE: corpus/transpose
// The classic shared-memory transpose (32 x 32 tile, 32 x 8 threads, each thread moves 4
// elements): the reads of the tile walk a column, tile[threadIdx.x][...], and rows of 32
// floats put the 32 lanes of a warp in one bank. One float of padding per row spreads
// them over all 32 banks.
// kltrans: launch transpose_classic grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_classic(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;  // input column
    int y = blockIdx.y * TILE_DIM + threadIdx.y;  // input row
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    }
    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;  // output column = input row
    y = blockIdx.x * TILE_DIM + threadIdx.y;  // output row = input column
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
