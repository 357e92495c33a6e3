// RUN: kltrans opt -p 'unroll{factor=8}'
// CHECK-SKIP: factor-fits: exceeds the 4 iterations
// Unrolling 8 times a loop of 4 iterations makes no sense: refused.
__global__ void dot4(const float* a, const float* b, float* out) {
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) acc += a[k] * b[k];
  out[0] = acc;
}
