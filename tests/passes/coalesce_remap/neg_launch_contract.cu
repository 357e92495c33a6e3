// RUN: kltrans opt -p 'coalesce-remap'
// CHECK-SKIP: launch-contract: is read from a host launcher
// The launch is a host launcher, not a header line: the pass only accepts kernels with a
// `// kltrans: launch` header (it keeps the grid, but the contract must be checkable).
__global__ void negate(const float* __restrict__ x, float* __restrict__ y, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i < n) y[i] = -x[i];
  }
}

void launch_negate(const float* x, float* y, int n) {
  negate<<<(n + 1023) / 1024, 256>>>(x, y, n);
}
