// RUN: kltrans opt -p 'reduce-during-load' --assume reassoc
// CHECK-SKIP: grid-shape: covers m, not the load's bound n
// The grid covers m elements while the load stops at n: dividing the grid would leave
// elements below n to no block when m < n.
// kltrans: launch reduce_rounded grid=(m+255)/256 block=256
extern "C" __global__ void reduce_rounded(const float* x, float* out, int n, int m) {
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
