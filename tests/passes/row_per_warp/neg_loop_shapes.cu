// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: loop-shapes: neither a declaration nor an assignment
// A branch inside the column loop (sum of the positive entries): the pass only handles
// maps and unconditional reductions; the guard must be the only branch.
// kltrans: launch pos_sum grid=ceil_div(rows, 256) block=256
extern "C" __global__ void pos_sum(const float* __restrict__ x, float* __restrict__ out,
                                   int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) {
    float v = x[row * cols + j];
    if (v > 0.0f) s += v;
  }
  out[row] = s;
}
