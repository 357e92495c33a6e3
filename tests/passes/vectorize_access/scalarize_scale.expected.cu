// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The float4 scale kernel (scale's signature) back to one element per thread: the .x
// lane, with x4.x read as x[i], is the scalar body; the grid is multiplied back. The
// alignment fact is the one the vector version relied on (the round trip needs it).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
