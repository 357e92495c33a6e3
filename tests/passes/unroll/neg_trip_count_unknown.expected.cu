// RUN: kltrans opt -p 'unroll{factor=full}'
// CHECK-SKIP: trip-count-known: depends on n
// Full unrolling of a loop bounded by the runtime value n is impossible: no rewrite.
__global__ void prefix_len(const float* x, float* out, int n) {
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += x[k];
  out[0] = acc;
}
