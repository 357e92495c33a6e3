// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: runs-at-least-once: may run zero times (k < n)
// Nothing says n >= 1: for n == 0 the original reads nothing, the hoisted version would
// read scale[row].
__global__ void gemv_scaled(const float* w, const float* x, const float* scale, float* y,
                            int rows, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += w[row * n + k] * x[k] * scale[row];
    y[row] = acc;
  }
}
