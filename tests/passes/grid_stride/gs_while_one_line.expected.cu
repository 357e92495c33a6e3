// RUN: kltrans opt -p 'grid-stride{form=while,max_blocks=264}'
// GATE: tests/data/workloads/scale
// A braced body on the guard's line: the update joins it on that line.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  while (i < n) { y[i] = a * x[i] + b; i += blockDim.x * gridDim.x; }
}
