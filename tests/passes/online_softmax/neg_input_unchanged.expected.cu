// RUN: kltrans opt -p 'online-softmax' --assume reassoc
// CHECK-SKIP: input-unchanged: writes the array the loops read
// The kernel clamps the first element between the loops: the sum loop reads a value the
// max loop did not see.
// kltrans: launch clamp_first grid=ceil_div(rows, 256) block=256
extern "C" __global__ void clamp_first(float* x, float* out, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float* xr = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  xr[0] = fminf(xr[0], 0.0f);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(xr[c] - m);
  out[row] = s;
}
