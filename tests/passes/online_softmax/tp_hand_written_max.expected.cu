// RUN: kltrans opt -p 'two-pass-softmax{between=0}' --assume reassoc
// A hand-written one-pass loop in the same form with a conditional max, __expf, other
// temporaries (x_c, m_new) and the statistics declared together: between=0 puts the two
// loops next to each other.
// kltrans: launch lse grid=ceil_div(rows, 256) block=256
extern "C" __global__ void lse(const float* __restrict__ x, float* __restrict__ out, int rows,
                               int cols) {
  const int r = threadIdx.x + blockIdx.x * blockDim.x;
  if (r >= rows) return;
  float m = -INFINITY, s = 0.0f;
  for (int c = 0; c < cols; ++c) {
    m = x[(size_t)r * cols + c] > m ? x[(size_t)r * cols + c] : m;
  }
  for (int c = 0; c < cols; ++c) {
    s = s + __expf(x[(size_t)r * cols + c] - m);
  }
  out[r] = m + logf(s);
}
