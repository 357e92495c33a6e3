// RUN: kltrans opt -p 'drop-launch-bounds'
// GATE: tests/data/workloads/copy
// The bound is an expression of macros: drop-launch-bounds hands it to add-launch-bounds
// as max_threads=WARPS * 32, which writes the same spelling back.
// kltrans: launch copy grid=ceil_div(n, 128) block=128
#define WARPS 4
extern "C" __global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
