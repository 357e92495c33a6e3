// kltrans: launch transposeNoBankConflicts grid=(ceil_div(cols, TILE_DIM), ceil_div(rows, TILE_DIM)) block=(TILE_DIM, BLOCK_ROWS)
// Transpose through a padded shared tile: the same staging as the coalesced version,
// but every tile row holds TILE_DIM + 1 floats. Element (r, c) of the tile then sits in
// bank (r * 33 + c) % 32, so the 32 threads of a warp reading one tile column touch 32
// different banks and the column reads no longer serialize.

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transposeNoBankConflicts(float *odata, const float *idata, int rows, int cols)
{
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];

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
