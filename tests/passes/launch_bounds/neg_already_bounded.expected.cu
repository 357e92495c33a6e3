// RUN: kltrans opt -p 'add-launch-bounds'
// CHECK-SKIP: no-launch-bounds: already has __launch_bounds__(256)
// The kernel already promises a bound: add-launch-bounds never adds a second one.
// kltrans: launch copy grid=ceil_div(n, 256) block=256
__global__ void __launch_bounds__(256) copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
