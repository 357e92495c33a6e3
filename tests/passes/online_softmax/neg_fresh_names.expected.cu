// RUN: kltrans opt -p 'online-softmax{value=v}' --assume reassoc
// CHECK-SKIP: fresh-names: value=v: v is already used in scale_rows
// The element temporary would be called v, but the kernel already has a v (the scale).
// kltrans: launch scale_rows grid=ceil_div(rows, 256) block=256
extern "C" __global__ void scale_rows(const float* x, float* out, float v, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(xr[c] - m);
  out[row] = v * s;
}
