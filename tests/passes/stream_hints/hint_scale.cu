// RUN: kltrans opt -p 'stream-hints' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// The scale workload: x is read once and y written once per thread, so both take the
// evict-first streaming path (__ldcs / __stcs). x and y never overlap (a fact of the
// call site, from the context), so x is read-only while the kernel runs.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
