// RUN: kltrans opt -p 'add-launch-bounds{max_threads=TILE_X*TILE_Y,place=before-global}'
// GATE: corpus/transpose
// A 2-D block of TILE_X x TILE_Y threads: the bound is written as the product of the two
// macros, so it follows them if the tile changes.
// kltrans: launch transpose grid=(ceil_div(rows, TILE_X), ceil_div(cols, TILE_Y)) block=(TILE_X, TILE_Y)
#define TILE_X 16
#define TILE_Y 16
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
  int oc = blockIdx.x * blockDim.x + threadIdx.x;
  int orow = blockIdx.y * blockDim.y + threadIdx.y;
  if (oc < rows && orow < cols) {
    out[(size_t)orow * rows + oc] = in[(size_t)oc * cols + orow];
  }
}
