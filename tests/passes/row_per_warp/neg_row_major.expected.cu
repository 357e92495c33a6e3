// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: row-major: rows are not laid out row-major
// The matrix is column-major (element (r, j) at j * rows + r): a warp per row would
// write 32 elements `rows` apart, and the pass only handles row-major rows.
// kltrans: launch center_cols grid=ceil_div(rows, 256) block=256
extern "C" __global__ void center_cols(const float* __restrict__ x, float* __restrict__ y,
                                       int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += x[j * rows + row];
  float mu = s / (float)cols;
  for (int j = 0; j < cols; ++j) y[j * rows + row] = x[j * rows + row] - mu;
}
