// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: no-early-exit: has a return
// A return inside the body skips NaNs: in a loop it would also skip every later element
// of the thread.
// kltrans: launch log_positive grid=ceil_div(n, 256) block=256
__global__ void log_positive(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    if (v != v) return;
    y[i] = logf(v);
  }
}
