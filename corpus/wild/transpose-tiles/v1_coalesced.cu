// kltrans: launch transposeCoalesced grid=(ceil_div(cols, TILE_DIM), ceil_div(rows, TILE_DIM)) block=(TILE_DIM, BLOCK_ROWS)
// Coalesced transpose: a block stages a TILE_DIM x TILE_DIM tile in shared memory.
// Rows of the tile are read from idata with consecutive threads on consecutive columns;
// after the barrier the block swaps its block indices and reads the tile by columns, so
// the writes to odata are also runs of consecutive floats. Each thread moves
// TILE_DIM / BLOCK_ROWS elements. Column reads of the tile hit one shared-memory bank
// 32 times (a 32-way bank conflict).

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transposeCoalesced(float *odata, const float *idata, int rows, int cols)
{
  __shared__ float tile[TILE_DIM][TILE_DIM];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;  // input column
  int y = blockIdx.y * TILE_DIM + threadIdx.y;  // first input row of this thread

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];

  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // output column = input row
  y = blockIdx.x * TILE_DIM + threadIdx.y;  // output row = input column

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < rows && y + j < cols)
      odata[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
