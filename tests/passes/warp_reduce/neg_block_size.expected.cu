// RUN: kltrans opt -p 'warp-reduce'
// CHECK-SKIP: block-size: is less than a warp
// Blocks of 16 threads: a full-mask shuffle needs all 32 lanes of warp 0.
// kltrans: launch tiny_sums grid=ceil_div(n, 16) block=16
extern "C" __global__ void tiny_sums(const float* x, float* out, int n) {
  __shared__ float sdata[16];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
