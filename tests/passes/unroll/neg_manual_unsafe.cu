// RUN: kltrans opt -p 'unroll{factor=full,style=manual}'
// CHECK-SKIP: manual-safe: break
// A break in the body cannot be copied per iteration: no manual unrolling.
__global__ void first_negative(const float* x, int* out) {
  int found = -1;
  for (int k = 0; k < 8; ++k) {
    if (x[k] < 0.0f) { found = k; break; }
  }
  out[0] = found;
}
