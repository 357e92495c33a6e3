// RUN: kltrans opt -p 'reduce-after-load' --assume reassoc
// GATE: corpus/reduce-sum
// What reduce-during-load{factor=2} writes for the Harris kernel: one element per thread
// again, the grid multiplied back.
// kltrans: launch reduce_tree grid=ceil_div(n, 2 * 256) block=256
extern "C" __global__ void reduce_tree(const float* x, float* out, int n) {
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
