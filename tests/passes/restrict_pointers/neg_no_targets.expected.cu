// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// CHECK-SKIP: has-targets: already __restrict__
// Every pointer parameter is already __restrict__: nothing to do.
__global__ void copy(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
