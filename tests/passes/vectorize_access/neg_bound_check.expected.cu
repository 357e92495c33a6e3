// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: bound-check: early exit
// An early-exit bounds check: the body after it is not a guarded statement the pass can
// copy per lane (rewrite it as `if (i < n) { ... }` first).
// kltrans: launch square grid=ceil_div(n, 256) block=256
__global__ void square(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] * x[i];
}
