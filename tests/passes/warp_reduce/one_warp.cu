// RUN: kltrans opt -p 'warp-reduce'
// GATE: corpus/reduce-sum
// A one-warp block: the tree keeps no stride (s > 32 never holds for s = 16) and warp 0
// reduces sdata[tid] with shuffles alone.
// kltrans: launch warp_block_sum grid=ceil_div(n, 32) block=32
extern "C" __global__ void warp_block_sum(const float* x, float* out, int n) {
  __shared__ float buf[32];
  int t = threadIdx.x;
  int idx = blockIdx.x * blockDim.x + t;
  buf[t] = 0.0f;
  if (idx < n) buf[t] = x[idx];
  __syncthreads();
  for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, buf[0]);
}
