// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: bound-check: early exit
// The bounds check is an early exit: the rest of the kernel is the body, and turning a
// return into a loop is not this pass's job. Rewrite it as `if (i < n) { ... }` first.
// kltrans: launch square grid=ceil_div(n, 256) block=256
__global__ void square(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] * x[i];
}
