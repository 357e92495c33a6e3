// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: type-known: declared auto
// s is declared auto: the element type to declare the temporary with is not written.
__global__ void weighted(const float* w, const float* scale, float* out, int row) {
  const auto* s = scale;
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) acc += w[k] * s[row];
  out[row] = acc;
}
