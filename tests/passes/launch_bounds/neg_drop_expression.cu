// RUN: kltrans opt -p 'drop-launch-bounds'
// CHECK-SKIP: restorable: neither an integer literal nor a name
// The bound is an expression: add-launch-bounds takes a number or a name, so it could not
// write this attribute back; the lineage would lose the step.
#define WARPS 4
__global__ void __launch_bounds__(WARPS * 32) warp_copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
