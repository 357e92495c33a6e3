// kltrans: launch transposeWideTile grid=(ceil_div(cols, TILE_DIM), ceil_div(rows, TILE_DIM)) block=(BLOCK_COLS, BLOCK_ROWS)
// Padded-tile transpose with more work per thread: the tile grows to 64 x 64 (padded to
// 65 floats a row) while the block stays 32 x 8, so each thread moves 16 elements, two
// 32-wide column strips of eight rows. A thread now has 16 independent loads in flight
// before the barrier (against 4), which is what keeps HBM busy on a large modern GPU,
// and each block pays for one barrier per 16 KiB instead of per 4 KiB. Warps still read
// and write 32 consecutive floats; the padding keeps the column reads conflict-free.

#define TILE_DIM 64
#define BLOCK_ROWS 8
#define BLOCK_COLS 32

__global__ void transposeWideTile(float *odata, const float *idata, int rows, int cols)
{
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;  // first input column of this thread
  int y = blockIdx.y * TILE_DIM + threadIdx.y;  // first input row of this thread

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    for (int i = 0; i < TILE_DIM; i += BLOCK_COLS)
      if (x + i < cols && y + j < rows)
        tile[threadIdx.y + j][threadIdx.x + i] = idata[(y + j) * cols + x + i];

  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // output column = input row
  y = blockIdx.x * TILE_DIM + threadIdx.y;  // output row = input column

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    for (int i = 0; i < TILE_DIM; i += BLOCK_COLS)
      if (x + i < rows && y + j < cols)
        odata[(y + j) * rows + x + i] = tile[threadIdx.x + i][threadIdx.y + j];
}
