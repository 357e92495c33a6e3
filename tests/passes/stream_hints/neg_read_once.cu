// RUN: kltrans opt -p 'stream-hints{arrays=x}'
// CHECK-SKIP: read-once: x[i] is read on every iteration of the loop at line 10
// x[i] does not depend on k: the thread reads the same address m times, and an
// evict-first load would throw away the line it needs on the next iteration.
// kltrans: launch outer grid=ceil_div(n, 256) block=256
extern "C" __global__ void outer(const float* __restrict__ x, const float* __restrict__ w,
                                 float* __restrict__ y, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < m; ++k) {
    y[(size_t)k * n + i] = x[i] * w[k];
  }
}
