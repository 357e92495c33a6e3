// RUN: kltrans opt -p 'uncoalesce-remap'
// CHECK-SKIP: launch-contract: has no launch contract
// No launch header: the pass needs the contract to check the 1-D launch.
__global__ void negate(const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int k = 0; k < 4; ++k) {
    int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
    if (i < n) y[i] = -x[i];
  }
}
