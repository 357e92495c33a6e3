// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: no-early-exit: has a return
// A return inside the body: repeated per element it would drop the thread's later
// elements.
// kltrans: launch safe_rsqrt grid=ceil_div(n, 256) block=256
__global__ void safe_rsqrt(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (x[i] <= 0.0f) return;
    y[i] = rsqrtf(x[i]);
  }
}
