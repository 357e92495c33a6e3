// RUN: kltrans opt -p 'reduce-after-load' --assume reassoc
// GATE: corpus/reduce-sum
// Four guarded loads over a #define'd block (what reduce-during-load{factor=4} writes):
// back to one element per thread and the grid of ceil_div(n, 128).
#define BLOCK 128
// kltrans: launch block_sum grid=ceil_div(n, 4 * 128) block=128
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float partial[BLOCK];
  int gid = threadIdx.x + (BLOCK * 4) * blockIdx.x;
  partial[threadIdx.x] = (gid < n ? x[gid] : 0.0f)
      + (gid + BLOCK < n ? x[gid + BLOCK] : 0.0f)
      + (gid + 2 * BLOCK < n ? x[gid + 2 * BLOCK] : 0.0f)
      + (gid + 3 * BLOCK < n ? x[gid + 3 * BLOCK] : 0.0f);
  __syncthreads();
  unsigned int s = BLOCK / 2;
  while (s > 0) {
    if (threadIdx.x < s) {
      partial[threadIdx.x] = partial[threadIdx.x] + partial[threadIdx.x + s];
    }
    __syncthreads();
    s /= 2;
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
