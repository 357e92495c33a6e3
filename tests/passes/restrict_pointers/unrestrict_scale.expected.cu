// RUN: kltrans opt -p 'unrestrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// Both __restrict__ qualifiers go; const stays on x. The assumption is the fact under
// which the original was valid (the round trip, restrict-pointers, needs it).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
#define BLOCK 256

extern "C" __global__ void scale(const float* x, float* y, float a,
                                 float b, int n) {
  const int gid = blockIdx.x * BLOCK + threadIdx.x;
  if (gid < n) {
    y[gid] = a * x[gid] + b;
  }
}
