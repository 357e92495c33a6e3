// RUN: kltrans opt -p 'two-pass-softmax' --assume reassoc
// CHECK-SKIP: pure-element: calls next_logit
// The element comes from a device function (here a counter-based draw): split into two
// loops it would be evaluated twice, and nothing says it gives the same value again.
__device__ float next_logit(unsigned* state) { *state = *state * 1664525u + 1013904223u; return (float)(*state >> 8) * 1e-6f; }
// kltrans: launch sample grid=ceil_div(rows, 256) block=256
extern "C" __global__ void sample(float* out, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  unsigned state = 12345u + r;
  float m = -INFINITY;
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float v = next_logit(&state);
    const float mn = fmaxf(m, v);
    if (mn != -INFINITY) {
      s *= expf(m - mn);
      s += expf(v - mn);
    }
    m = mn;
  }
  out[r] = m + logf(s);
}
