// RUN: kltrans opt -p 'warp-reduce{shuffle=xor}'
// GATE: corpus/reduce-sum
// A while-loop tree over a #define'd block, written with threadIdx.x itself, `s /= 2` and
// `a = a + b`. Every thread reads the block sum afterwards, so a __syncthreads() follows
// the warp step; the xor butterfly pairs the same lanes as the tree for lane 0.
#define BLOCK 128
// kltrans: launch block_sum grid=ceil_div(n, 128) block=128
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float partial[BLOCK];
  int gid = threadIdx.x + blockDim.x * blockIdx.x;
  partial[threadIdx.x] = gid < n ? x[gid] : 0.0f;
  __syncthreads();
  unsigned int s = BLOCK / 2;
  while (s > 32) {
    if (threadIdx.x < s) {
      partial[threadIdx.x] = partial[threadIdx.x] + partial[threadIdx.x + s];
    }
    __syncthreads();
    s /= 2;
  }
  if (threadIdx.x < 32) {
    float v = partial[threadIdx.x];
    v = v + partial[threadIdx.x + 32];
    for (int off = 16; off > 0; off >>= 1)
      v = v + __shfl_xor_sync(0xffffffff, v, off);
    if (threadIdx.x == 0) partial[0] = v;
  }
  __syncthreads();
  float total = partial[0];
  if (threadIdx.x == 0) atomicAdd(out, total);
}
