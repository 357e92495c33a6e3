// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: sole-work: runs outside the guarded statement
// A fused kernel with two guarded statements over different sizes: with a capped grid the
// flags would no longer all be cleared, so neither guard may become a loop on its own.
// kltrans: launch scale_and_clear grid=ceil_div(n, 256) block=256
__global__ void scale_and_clear(const float* x, float* y, int* flags, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) flags[i] = 0;
  if (i < n) y[i] = 2.0f * x[i];
}
