// RUN: kltrans opt -p 'online-softmax' --assume reassoc
// CHECK-SKIP: same-traversal: the loops differ
// The max runs over the whole row but the sum only over its first k columns (a top-k
// style partial normalizer): one loop cannot compute both.
// kltrans: launch partial grid=ceil_div(rows, 256) block=256
extern "C" __global__ void partial(const float* x, float* out, int rows, int cols, int k) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.0f;
  for (int c = 0; c < k; ++c) s += expf(xr[c] - m);
  out[row] = s;
}
