// RUN: kltrans opt -p 'hoist-invariant' --assume 'n>=1'
// scale[row] does not change inside the k loop and nothing in the loop stores to memory:
// it is loaded once, before the loop. n >= 1 makes the early load safe.
__global__ void gemv_scaled(const float* w, const float* x, const float* scale, float* y,
                            int rows, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0.0f;
    const float scale_row = scale[row];
    for (int k = 0; k < n; ++k) {
      acc += w[row * n + k] * x[k] * scale_row;
    }
    y[row] = acc;
  }
}
