// kltrans: launch stencil5_smem grid=(ceil_div(cols, BLOCK_X), ceil_div(rows, BLOCK_Y)) block=(BLOCK_X, BLOCK_Y)
// 5-point stencil, shared-memory tile: every BLOCK_X x BLOCK_Y block first copies its
// cells plus a one-cell halo ring into a (BLOCK_Y + 2) x (BLOCK_X + 2) shared tile. Each
// thread loads its own cell; the threads on the block's edges also load the neighbouring
// cell across that edge (the corners are not needed by a 5-point stencil). Cells outside
// the grid are stored as zero, and threads outside the grid still help load and reach
// the barrier. After __syncthreads the stencil reads only shared memory, so each input
// cell comes from global memory about once per block instead of five times.

#define BLOCK_X 32
#define BLOCK_Y 8
#define IDX(r, c) ((size_t)(r) * cols + (c))

__global__ void stencil5_smem(const float *in, float *out, int rows, int cols,
                              float c0, float c1)
{
    __shared__ float tile[BLOCK_Y + 2][BLOCK_X + 2];

    int ix = blockIdx.x * BLOCK_X + threadIdx.x;
    int iy = blockIdx.y * BLOCK_Y + threadIdx.y;
    int tx = threadIdx.x + 1;
    int ty = threadIdx.y + 1;
    bool inside = ix < cols && iy < rows;

    tile[ty][tx] = inside ? in[IDX(iy, ix)] : 0.0f;
    if (threadIdx.x == 0)
        tile[ty][0] = (iy < rows && ix > 0) ? in[IDX(iy, ix - 1)] : 0.0f;
    if (threadIdx.x == BLOCK_X - 1)
        tile[ty][BLOCK_X + 1] = (iy < rows && ix + 1 < cols) ? in[IDX(iy, ix + 1)] : 0.0f;
    if (threadIdx.y == 0)
        tile[0][tx] = (ix < cols && iy > 0) ? in[IDX(iy - 1, ix)] : 0.0f;
    if (threadIdx.y == BLOCK_Y - 1)
        tile[BLOCK_Y + 1][tx] = (ix < cols && iy + 1 < rows) ? in[IDX(iy + 1, ix)] : 0.0f;
    __syncthreads();

    if (inside)
        out[IDX(iy, ix)] = c0 * tile[ty][tx] +
                           c1 * (tile[ty - 1][tx] + tile[ty + 1][tx] + tile[ty][tx - 1] + tile[ty][tx + 1]);
}
