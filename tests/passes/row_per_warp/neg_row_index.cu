// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: row-index: is not the global thread index
// One BLOCK per row (row = blockIdx.x): the threads of a block already share the row,
// so there is no thread-per-row mapping to turn into a warp per row.
// kltrans: launch rowsum grid=rows block=256
extern "C" __global__ void rowsum(const float* __restrict__ x, float* __restrict__ out,
                                  int rows, int cols) {
  int row = blockIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += x[row * cols + j];
  out[row] = s;
}
