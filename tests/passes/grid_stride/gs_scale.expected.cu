// RUN: kltrans opt -p 'grid-stride{max_blocks=132}'
// GATE: tests/data/workloads/scale
// The classic one-thread-per-element kernel (the scale workload's signature): the index
// declaration moves into the loop header, the grid is capped at 132 blocks and each
// thread strides over the rest.
// kltrans: launch scale grid=min(ceil_div(n, 256), 132) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + b;
}
