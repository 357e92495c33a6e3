// RUN: kltrans opt -p 'sink-invariant'
// CHECK-SKIP: same-type: is float but h[i] is double
// The temporary rounds h[i] to float once; sinking would compute in double inside the loop.
__global__ void mix(const double* h, float* y, int i) {
  const float h_i = h[i];
  for (int k = 0; k < 8; ++k) y[k] = y[k] * h_i;
}
