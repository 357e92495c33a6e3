// RUN: kltrans opt -p 'add-launch-bounds{max_threads=256,min_blocks=4,place=before-global}' --arch sm_80
// A 32 x 8 block (256 threads) from a dim3 in the launcher; four resident blocks of 256
// threads fit an sm_80 SM (2048 threads) with 64 registers per thread.
#define TILE 32
#define ROWS 8

__global__ void transpose(float* out, const float* in, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

void launch_transpose(float* out, const float* in, int width, int height) {
  dim3 block(TILE, ROWS);
  dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE);
  transpose<<<grid, block>>>(out, in, width, height);
}
