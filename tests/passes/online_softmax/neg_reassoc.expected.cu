// RUN: kltrans opt -p 'online-softmax'
// CHECK-SKIP: reassoc: pass --assume reassoc
// Without --assume reassoc: the rescaled one-pass sum rounds differently.
// kltrans: launch softmax_naive grid=ceil_div(rows, 256) block=256
extern "C" __global__ void softmax_naive(const float* x, float* y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(xr[c] - m);
  for (int c = 0; c < cols; ++c) y[(size_t)row * cols + c] = expf(xr[c] - m) / s;
}
