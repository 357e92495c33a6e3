// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: bound-check: early exit
// The bounds check is an early exit (`if (i >= n) return;`): coarsening needs the body
// under `if (i < n)` to repeat it per element.
// kltrans: launch square grid=ceil_div(n, 256) block=256
__global__ void square(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] * x[i];
}
