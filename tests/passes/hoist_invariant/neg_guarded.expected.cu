// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: unguarded: the load runs only under if
// bias[row] is read only when k < valid: if valid is 0 the original never reads it (row
// may be out of bounds then), so it cannot run before the loop.
__global__ void masked_sum(const float* x, const float* bias, float* out, int valid) {
  int row = blockIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < 32; ++k) {
    acc += x[row * 32 + k];
    if (k < valid) acc += bias[row];
  }
  out[row] = acc;
}
