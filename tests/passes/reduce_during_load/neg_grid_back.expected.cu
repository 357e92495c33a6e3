// RUN: kltrans opt -p 'reduce-after-load'
// CHECK-SKIP: grid-back: cannot tell the grid of one element per thread
// The grid is capped at 1024 blocks: what one element per thread would need is not the
// capped grid times two.
// kltrans: launch reduce_pairs grid=min(ceil_div(n, 512), 1024) block=256
extern "C" __global__ void reduce_pairs(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  sdata[tid] = ((i < n) ? x[i] : 0.0f) + (i + blockDim.x < n ? x[i + blockDim.x] : 0.0f);
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
