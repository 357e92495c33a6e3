// kltrans: launch stencil5_naive grid=(ceil_div(cols, BLOCK_X), ceil_div(rows, BLOCK_Y)) block=(BLOCK_X, BLOCK_Y)
// 5-point stencil, naive: a 2-D grid of BLOCK_X x BLOCK_Y thread blocks, one thread per
// output cell (x = column, y = row). Each thread reads its cell and its four neighbours
// straight from global memory; neighbours outside the grid count as zero.

#define BLOCK_X 32
#define BLOCK_Y 8
#define IDX(r, c) ((size_t)(r) * cols + (c))

__global__ void stencil5_naive(const float *in, float *out, int rows, int cols,
                               float c0, float c1)
{
    int ix = blockIdx.x * BLOCK_X + threadIdx.x;
    int iy = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (ix >= cols || iy >= rows) return;

    float north = iy > 0        ? in[IDX(iy - 1, ix)] : 0.0f;
    float south = iy + 1 < rows ? in[IDX(iy + 1, ix)] : 0.0f;
    float west  = ix > 0        ? in[IDX(iy, ix - 1)] : 0.0f;
    float east  = ix + 1 < cols ? in[IDX(iy, ix + 1)] : 0.0f;

    out[IDX(iy, ix)] = c0 * in[IDX(iy, ix)] + c1 * (north + south + west + east);
}
