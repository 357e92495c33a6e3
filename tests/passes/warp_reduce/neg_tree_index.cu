// RUN: kltrans opt -p 'warp-reduce'
// CHECK-SKIP: tree-index: is not threadIdx.x
// The tree runs over a row index of a 2-D block: warp 0 does not hold elements 0..31.
// kltrans: launch row_sums grid=rows block=(32, 8)
extern "C" __global__ void row_sums(const float* x, float* out, int rows) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.y * 32 + threadIdx.x;
  sdata[tid] = x[blockIdx.x * 256 + tid];
  __syncthreads();
  for (unsigned int s = 128; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
