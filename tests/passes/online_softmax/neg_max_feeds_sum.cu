// RUN: kltrans opt -p 'online-softmax' --assume reassoc
// CHECK-SKIP: max-feeds-sum: m is used between the loops
// The row maximum is stored between the loops: the fused loop would have no final
// maximum at that point.
// kltrans: launch stats grid=ceil_div(rows, 256) block=256
extern "C" __global__ void stats(const float* x, float* mx, float* sm, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  mx[row] = m;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(xr[c] - m);
  sm[row] = s;
}
