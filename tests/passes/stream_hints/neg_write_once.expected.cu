// RUN: kltrans opt -p 'stream-hints{load=none}'
// CHECK-SKIP: write-once: y[i] is also accessed at line 10
// y[i] is zeroed, then accumulated into: a streaming store would evict the line the
// thread reads back right after.
// kltrans: launch acc grid=ceil_div(n, 256) block=256
extern "C" __global__ void acc(const float* __restrict__ x, float* __restrict__ y, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = 0.0f;
  for (int k = 0; k < m; ++k) y[i] += x[(size_t)k * n + i];
}
