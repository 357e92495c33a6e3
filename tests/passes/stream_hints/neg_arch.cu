// RUN: kltrans opt -p 'stream-hints{load=ldg,store=none}' --arch sm_30
// CHECK-SKIP: arch: sm_30 is older than sm_35, the first with __ldg
// Compiled for Kepler GK10x: no read-only data cache, no __ldg.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a,
                                 float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
