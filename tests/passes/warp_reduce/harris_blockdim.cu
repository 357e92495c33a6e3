// RUN: kltrans opt -p 'warp-reduce'
// GATE: corpus/reduce-sum
// Harris-style tree reduction (blockDim.x / 2, s >>= 1, named tid): the tree stops at 64,
// warp 0 finishes with __shfl_down_sync; thread 0 adds the block's sum into out.
// kltrans: launch reduce_tree grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_tree(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
