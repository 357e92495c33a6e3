// RUN: kltrans opt -p 'l2-prefetch{ahead=8}'
// GATE: tests/data/workloads/scale
// The element-per-thread idiom: block b streams x[b * 256 .. b * 256 + 256); thread 0
// asks for the range eight blocks later (1 KiB, a multiple of 16 bytes).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#include <stdint.h>

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + b;
  }
}
