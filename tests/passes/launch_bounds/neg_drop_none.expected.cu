// RUN: kltrans opt -p 'drop-launch-bounds'
// CHECK-SKIP: has-launch-bounds: has no __launch_bounds__
// There is no attribute to remove.
__global__ void clamp01(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = fminf(fmaxf(v[i], 0.0f), 1.0f);
}
