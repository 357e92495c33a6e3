// RUN: kltrans opt -p 'row-per-warp'
// CHECK-SKIP: storage-check: at another element than the one the same thread writes
// In place: every element minus the row's first element. With a warp per row, lane 0
// overwrites x[row * cols] while the other lanes still read it.
// kltrans: launch sub_first grid=ceil_div(rows, 256) block=256
extern "C" __global__ void sub_first(float* x, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  for (int j = 0; j < cols; ++j) x[row * cols + j] = x[row * cols + j] - x[row * cols];
}
