// RUN: kltrans opt -p 'unrestrict-pointers'
// CHECK-SKIP: has-restrict: no __restrict__
// No pointer parameter is __restrict__: nothing to remove.
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
