// RUN: kltrans opt -p 'stream-hints{load=ldg,store=none}'
// CHECK-SKIP: read-only: x is written at line 8
// An in-place update: the kernel writes x, so the non-coherent read-only path (__ldg)
// could return data the kernel has already overwritten.
// kltrans: launch twice grid=ceil_div(n, 256) block=256
extern "C" __global__ void twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i];
}
