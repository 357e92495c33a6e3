// RUN: kltrans opt -p 'warp-reduce'
// CHECK-SKIP: result-only: reads an element other than 0
// The kernel also stores the tree's second partial sum: after warp-reduce sdata[1] would
// no longer hold it.
// kltrans: launch two_sums grid=ceil_div(n, 256) block=256
extern "C" __global__ void two_sums(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) {
    out[2 * blockIdx.x] = sdata[0];
    out[2 * blockIdx.x + 1] = sdata[1];
  }
}
