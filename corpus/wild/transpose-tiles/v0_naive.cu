// kltrans: launch transposeNaive grid=(ceil_div(cols, TILE_DIM), ceil_div(rows, BLOCK_ROWS)) block=(TILE_DIM, BLOCK_ROWS)
// Naive transpose: each thread copies a single element. threadIdx.x walks along an
// input row, so a warp reads 32 neighbouring floats (coalesced) but writes them to 32
// different output rows, `rows` floats apart (strided, one transaction per element).

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transposeNaive(float *odata, const float *idata, int rows, int cols)
{
  int x = blockIdx.x * TILE_DIM + threadIdx.x;    // input column
  int y = blockIdx.y * BLOCK_ROWS + threadIdx.y;  // input row

  if (x < cols && y < rows)
    odata[x * rows + y] = idata[y * cols + x];
}
