// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: no-aliasing-store: may alias and the loop writes out
// out and scale are plain pointers: a store to out[k] may change scale[0] (pass
// --assume no_alias(scale,out) or make them __restrict__).
__global__ void scale_copy(const float* in, float* out, const float* scale) {
  int base = blockIdx.x * 64;
  for (int k = 0; k < 64; ++k) out[base + k] = in[base + k] * scale[0];
}
