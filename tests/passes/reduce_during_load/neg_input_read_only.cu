// RUN: kltrans opt -p 'reduce-during-load' --assume reassoc
// CHECK-SKIP: input-read-only: writes x
// An in-place multi-pass reduction: block b stores its sum into x[b], which another block
// may be about to load as its second element.
// kltrans: launch reduce_in_place grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_in_place(float* x, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) x[blockIdx.x] = sdata[0];
}
