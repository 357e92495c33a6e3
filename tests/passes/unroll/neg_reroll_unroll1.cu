// RUN: kltrans opt -p 'reroll{style=pragma}'
// CHECK-SKIP: unrolls: forbids unrolling
// '#pragma unroll 1' asks the compiler NOT to unroll: there is nothing to re-roll.
__global__ void serial(const float* x, float* out, int n) {
  float acc = 0.0f;
#pragma unroll 1
  for (int k = 0; k < n; ++k) acc += x[k];
  out[0] = acc;
}
