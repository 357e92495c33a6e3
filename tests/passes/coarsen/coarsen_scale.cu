// RUN: kltrans opt -p 'coarsen{factor=4}'
// GATE: tests/data/workloads/scale
// The scale workload's kernel, four elements per thread: a block covers four
// block-sized chunks, consecutive threads stay on consecutive elements, the grid is
// divided by four.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
