// RUN: kltrans opt -p 'reroll'
// GATE: corpus/reduce-sum
// Grid-stride partial sums with an unroll pragma, a warp shuffle reduction and one
// atomicAdd per warp: reroll drops the pragma; the loops themselves are unchanged.
// kltrans: launch reduce_sum grid=ceil_div(n, 2048) block=256
#define FULL_MASK 0xffffffffu

extern "C" __global__ void reduce_sum(const float* x, float* out, int n) {
  float acc = 0.0f;
  #pragma unroll 8
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    acc += x[i];
  }
  for (int offset = 16; offset > 0; offset >>= 1)
    acc += __shfl_down_sync(FULL_MASK, acc, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}
