// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: fresh-name: scale_row is already a name
// The kernel already has a variable called scale_row.
__global__ void twice(const float* x, const float* scale, float* y, int row) {
  float scale_row = 2.0f;
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) acc += x[k] * scale[row];
  y[row] = acc * scale_row;
}
