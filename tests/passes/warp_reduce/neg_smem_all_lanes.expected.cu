// RUN: kltrans opt -p 'smem-reduce'
// CHECK-SKIP: all-lanes: splits a warp
// The shuffles run under a lane-dependent condition (a bug in the original: the full
// mask names lanes that never arrive); the rewrite is refused.
// kltrans: launch lower_half grid=ceil_div(n, 32) block=32
extern "C" __global__ void lower_half(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  if (threadIdx.x < 16) {
    for (int off = 16; off > 0; off >>= 1)
      v += __shfl_xor_sync(0xffffffff, v, off);
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
