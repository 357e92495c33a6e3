// Hostile: a quoted include of a host header that is not in the kernel's folder (NVRTC
// drops it, g++ finds the system's), for unistd.h's functions from host code. Refused at
// the compile stage.
// expect: compile: not a file of the kernel's folder
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#include "unistd.h"

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
