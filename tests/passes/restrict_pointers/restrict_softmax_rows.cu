// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// GATE: corpus/softmax
// One thread per row, three passes over the row. x is only read: it becomes
// const float* __restrict__; y is written: float* __restrict__.
// kltrans: launch softmax_rows grid=ceil_div(rows, 128) block=128
extern "C" __global__ void softmax_rows(float* x, float* y, int rows, int cols) {
  int row = threadIdx.x + blockIdx.x * blockDim.x;
  if (row >= rows) return;
  size_t off = (size_t)row * cols;
  float row_max = -INFINITY;
  for (int c = 0; c < cols; c++) row_max = fmaxf(row_max, x[off + c]);
  float denom = 0.0f;
  for (int c = 0; c < cols; c++) {
    float e = expf(x[off + c] - row_max);
    y[off + c] = e;
    denom += e;
  }
  for (int c = 0; c < cols; c++) y[off + c] /= denom;
}
