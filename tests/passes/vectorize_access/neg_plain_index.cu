// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: plain-index: i is used as a value
// A ramp uses the index itself as a value: a thread holding four elements has no single
// i to give them.
// kltrans: launch ramp grid=ceil_div(n, 256) block=256
__global__ void ramp(const float* x, float* y, float step, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + step * (float)i;
}
