// RUN: kltrans opt -p 'drop-launch-bounds'
// CHECK-SKIP: restorable: nor an expression of them joined by + - * /
// The bound is a shift: add-launch-bounds takes a number, a name or an expression joined
// by + - * /, so it could not write this attribute back; the lineage would lose the step.
#define WARPS 4
__global__ void __launch_bounds__(WARPS << 5) warp_copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
