// RUN: kltrans opt -p 'restrict-pointers'
// CHECK-SKIP: no-alias: may alias
// Nothing says x and y do not overlap (an in-place call would make them equal): no rewrite.
__global__ void add(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
