// RUN: kltrans opt -p 'sink-invariant'
// CHECK-SKIP: used-only-in-loop: outside the loop
// bias_row is also used after the loop: the declaration has to stay.
__global__ void biased(const float* x, const float* bias, float* y, int row) {
  float acc = 0.0f;
  const float bias_row = bias[row];
  for (int k = 0; k < 4; ++k) acc += x[row * 4 + k] * bias_row;
  y[row] = acc + bias_row;
}
