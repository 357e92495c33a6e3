// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: launch-contract: has no launch contract
// No launch header: the pass caps the grid, and there is no grid here to cap.
__global__ void negate(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -x[i];
}
