// RUN: kltrans opt -p 'grid-stride{max_blocks=none}'
// A uniform value is computed between the index and the guard, so the declaration stays
// where it is and the loop is `for (; idx < n; idx += ...)`. max_blocks=none keeps the
// grid: the loop then runs at most once per thread.
// kltrans: launch add_scaled grid=ceil_div(n, 128) block=128
__global__ void add_scaled(const float* a, const float* b, float* out, float alpha, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const float half_alpha = 0.5f * alpha;
  if (idx < n) out[idx] = a[idx] + half_alpha * b[idx];
}
