// RUN: kltrans opt -p 'two-pass-softmax'
// CHECK-SKIP: reassoc: pass --assume reassoc
// The loop online-softmax writes, but without --assume reassoc: the two-pass sum
// rounds differently.
// kltrans: launch lse grid=ceil_div(rows, 256) block=256
extern "C" __global__ void lse(const float* x, float* out, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float m = -INFINITY;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float v = x[(size_t)r * cols + c];
    const float mn = fmaxf(m, v);
    if (mn != -INFINITY) {
      s *= expf(m - mn);
      s += expf(v - mn);
    }
    m = mn;
  }
  out[r] = m + logf(s);
}
