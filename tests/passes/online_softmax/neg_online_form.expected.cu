// RUN: kltrans opt -p 'two-pass-softmax' --assume reassoc
// CHECK-SKIP: online-form: the guard is `(mn > -INFINITY)`
// A one-pass loop with a different guard: not the form online-softmax writes, so the
// split is not known to be its inverse.
// kltrans: launch lse grid=ceil_div(rows, 256) block=256
extern "C" __global__ void lse(const float* x, float* out, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float m = -INFINITY;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float v = x[(size_t)r * cols + c];
    const float mn = fmaxf(m, v);
    if (mn > -INFINITY) {
      s *= expf(m - mn);
      s += expf(v - mn);
    }
    m = mn;
  }
  out[r] = m + logf(s);
}
