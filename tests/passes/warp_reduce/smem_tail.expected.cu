// RUN: kltrans opt -p 'smem-reduce'
// GATE: corpus/reduce-sum
// What warp-reduce writes for the Harris tree: smem-reduce gives the full shared-memory
// tree back (the loop runs down to s = 1 again, the warp step goes).
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
