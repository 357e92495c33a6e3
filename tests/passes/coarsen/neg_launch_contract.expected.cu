// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: launch-contract: is read from a host launcher
// The launch is a host launcher in the same file, not a header line: the pass would have
// to divide the grid there, which it does not do.
__global__ void negate(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -x[i];
}

void launch_negate(const float* x, float* y, int n) {
  negate<<<(n + 255) / 256, 256>>>(x, y, n);
}
