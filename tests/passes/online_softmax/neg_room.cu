// RUN: kltrans opt -p 'two-pass-softmax{between=1}' --assume reassoc
// CHECK-SKIP: room: uses m: it cannot move after the max loop
// between=1 would move the statement before the loop between the two loops, but it
// declares m itself (m and s in one declaration): the max loop needs it first.
// kltrans: launch lse grid=ceil_div(rows, 256) block=256
extern "C" __global__ void lse(const float* x, float* out, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float m = -INFINITY, s = 0.0f;
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
