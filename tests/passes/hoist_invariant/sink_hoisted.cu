// RUN: kltrans opt -p 'sink-invariant' --assume 'k_len>=1'
// thresh_row follows the hoist-invariant naming scheme: the load goes back into the loop.
__global__ void row_hinge(const float* __restrict__ a, const float* __restrict__ thresh,
                          float* __restrict__ out, int rows, int k_len) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float acc = 0.0f;
  const float thresh_row = thresh[row];
  for (int k = 0; k < k_len; ++k) {
    float v = a[row * k_len + k] - thresh_row;
    acc += v > 0.0f ? v : 0.0f;
  }
  out[row] = acc;
}
