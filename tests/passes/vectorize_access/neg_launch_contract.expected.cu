// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: launch-contract: has no launch contract
// No launch header: the grid must shrink by 4, and there is no grid here to shrink.
__global__ void negate(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -x[i];
}
