// RUN: kltrans opt -p 'reroll'
// The unroll pragma is removed; the loop itself is unchanged.
__global__ void warp_sum(const float* x, float* out) {
  float v = x[threadIdx.x];
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
