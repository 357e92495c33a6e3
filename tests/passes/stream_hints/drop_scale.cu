// RUN: kltrans opt -p 'drop-stream-hints' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// The shape stream-hints writes for the scale workload: both hints become plain
// accesses again. The no_alias fact is the one the hinted version relied on (the round
// trip re-hints x through the read-only check).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcs(&y[i], a * __ldcs(&x[i]) + b);
}
