// RUN: kltrans opt -p 'one-per-thread'
// GATE: tests/data/workloads/scale
// A grid-stride loop on a grid that already gives every element a thread (scale's
// signature): the loop runs once per thread, the if is the same computation and the
// grid stays as it is.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + b;
}
