// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: grid-stride-loop: not at the global thread index
// A single-block kernel whose loop starts at threadIdx.x: it is not one element per
// thread of a grid, so there is no if to restore.
// kltrans: launch zero grid=1 block=256
__global__ void zero(float* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = 0.0f;
}
