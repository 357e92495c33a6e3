// RUN: kltrans opt -p 'reduce-during-load{factor=2}' --assume reassoc
// GATE: corpus/reduce-sum
// Harris' first add during load: each thread adds two elements blockDim.x apart before
// the tree, and the grid is halved. Float + is regrouped: --assume reassoc.
// kltrans: launch reduce_tree grid=ceil_div(n, 2 * 256) block=256
extern "C" __global__ void reduce_tree(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  float sum = (i < n) ? x[i] : 0.0f;
  if (i + blockDim.x < n) sum += x[i + blockDim.x];
  sdata[tid] = sum;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
