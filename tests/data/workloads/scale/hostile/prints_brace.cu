// Not hostile, but it used to break the gate: a correct kernel whose device printf leaves
// an unterminated "{" on stdout. The result channel is not stdout, so it passes.
// expect: pass
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#include <cstdio>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("{");
  if (i < n) y[i] = a * x[i] + b;
}
