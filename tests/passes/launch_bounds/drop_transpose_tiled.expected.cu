// RUN: kltrans opt -p 'drop-launch-bounds'
// GATE: corpus/transpose
// A 32 x 8 block moving a 32 x 32 tile through padded shared memory; the attribute
// (256 threads, 2 blocks per SM) goes, the values computed stay the same.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void
transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}
