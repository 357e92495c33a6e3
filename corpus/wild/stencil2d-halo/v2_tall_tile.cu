// kltrans: launch stencil5_tall grid=(ceil_div(cols, BLOCK_X), ceil_div(rows, TILE_Y)) block=(BLOCK_X, BLOCK_Y)
// 5-point stencil, tall shared-memory tile: the same BLOCK_X x BLOCK_Y threads now own a
// BLOCK_X x TILE_Y tile (TILE_Y = BLOCK_Y * ROWS_PER_THREAD), each thread handling
// ROWS_PER_THREAD cells of its column, BLOCK_Y rows apart. A thread first loads all of
// its cells into registers (independent loads, issued back to back: 8 in flight per
// thread instead of 1), then the edge threads fetch the halo, and only then is the tile
// written; the top and bottom halo rows and the barrier are paid once per 64 rows
// instead of once per 8. The tile with its one-cell halo is (TILE_Y + 2) x (BLOCK_X + 2)
// floats (about 9 KiB); cells outside the grid are stored as zero.

#define BLOCK_X 32
#define BLOCK_Y 8
#define ROWS_PER_THREAD 8
#define TILE_Y (BLOCK_Y * ROWS_PER_THREAD)
#define IDX(r, c) ((size_t)(r) * cols + (c))

__global__ void stencil5_tall(const float *in, float *out, int rows, int cols,
                              float c0, float c1)
{
    __shared__ float tile[TILE_Y + 2][BLOCK_X + 2];

    int ix = blockIdx.x * BLOCK_X + threadIdx.x;
    int y0 = blockIdx.y * TILE_Y;
    int tx = threadIdx.x + 1;
    bool col_ok = ix < cols;

    float cell[ROWS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < ROWS_PER_THREAD; k++) {
        int iy = y0 + threadIdx.y + k * BLOCK_Y;
        cell[k] = (col_ok && iy < rows) ? in[IDX(iy, ix)] : 0.0f;
    }

    // left and right halo columns: the first and the last thread of each row
    if (threadIdx.x == 0 || threadIdx.x == BLOCK_X - 1) {
        int hx = threadIdx.x == 0 ? ix - 1 : ix + 1;
        int hc = threadIdx.x == 0 ? 0 : BLOCK_X + 1;
#pragma unroll
        for (int k = 0; k < ROWS_PER_THREAD; k++) {
            int iy = y0 + threadIdx.y + k * BLOCK_Y;
            tile[threadIdx.y + k * BLOCK_Y + 1][hc] =
                (iy < rows && hx >= 0 && hx < cols) ? in[IDX(iy, hx)] : 0.0f;
        }
    }
    // top and bottom halo rows
    if (threadIdx.y == 0)
        tile[0][tx] = (col_ok && y0 > 0) ? in[IDX(y0 - 1, ix)] : 0.0f;
    if (threadIdx.y == BLOCK_Y - 1)
        tile[TILE_Y + 1][tx] = (col_ok && y0 + TILE_Y < rows) ? in[IDX(y0 + TILE_Y, ix)] : 0.0f;

#pragma unroll
    for (int k = 0; k < ROWS_PER_THREAD; k++)
        tile[threadIdx.y + k * BLOCK_Y + 1][tx] = cell[k];
    __syncthreads();

#pragma unroll
    for (int k = 0; k < ROWS_PER_THREAD; k++) {
        int ty = threadIdx.y + k * BLOCK_Y + 1;
        int iy = y0 + ty - 1;
        if (col_ok && iy < rows)
            out[IDX(iy, ix)] = c0 * tile[ty][tx] +
                               c1 * (tile[ty - 1][tx] + tile[ty + 1][tx] + tile[ty][tx - 1] + tile[ty][tx + 1]);
    }
}
