// RUN: kltrans opt -p 'unroll{factor=4}'
// CHECK-SKIP: not-unrolled: already has '#pragma unroll 2'
// The loop already carries an unroll pragma: unroll never stacks a second one.
__global__ void acc8(const float* x, float* out) {
  float acc = 0.0f;
#pragma unroll 2
  for (int k = 0; k < 8; ++k) acc += x[k];
  out[0] = acc;
}
