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
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    float v = sdata[tid];
    v += sdata[tid + 32];
    for (int off = 16; off > 0; off >>= 1)
      v += __shfl_down_sync(0xffffffff, v, off);
    if (tid == 0) sdata[0] = v;
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
