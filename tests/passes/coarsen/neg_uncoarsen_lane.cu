// RUN: kltrans opt -p 'uncoarsen'
// CHECK-SKIP: lane-private: the body uses c
// The body uses the chunk counter c: one element per thread has no counter to give it.
// kltrans: launch ramp grid=ceil_div(ceil_div(n, 256), 4) block=256
__global__ void ramp(float* y, int n) {
  int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  for (int c = 0; c < 4; ++c) {
    int j = i + c * blockDim.x;
    if (j < n) y[j] = (float)c;
  }
}
