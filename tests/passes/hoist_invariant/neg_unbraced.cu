// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: in-block: the unbraced body of if
// The loop is the body of an if without braces: there is no block to put the declaration in.
__global__ void dot4(const float* a, const float* w, float* out, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  if (row < rows)
    for (int k = 0; k < 4; ++k) acc += a[row * 4 + k] * w[row];
  if (row < rows) out[row] = acc;
}
