// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: no-aliasing-store: the loop writes v at line
// In-place normalization by the first element: v[0] changes at k = 0, so the loop reads a
// different value from then on; hoisting it would change the result.
__global__ void normalize_first(float* v, int stride) {
  float* row = v + (blockIdx.x * blockDim.x + threadIdx.x) * stride;
  for (int k = 0; k < 8; ++k) {
    row[k] = row[k] / v[0];
  }
}
