// RUN: kltrans opt -p 'warp-reduce{value=i}'
// CHECK-SKIP: fresh-names: the value name i is already used
// The register name asked for is the kernel's element index.
// kltrans: launch named_sums grid=ceil_div(n, 256) block=256
extern "C" __global__ void named_sums(const float* x, float* out, int n) {
  __shared__ float sdata[256];
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
