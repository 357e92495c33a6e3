// RUN: kltrans opt -p 'warp-reduce'
// CHECK-SKIP: operator: is not an associative and commutative operator
// A subtraction tree: the pairs would have to stay ordered, and a - b is not associative.
// kltrans: launch alt_diff grid=ceil_div(n, 256) block=256
extern "C" __global__ void alt_diff(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = sdata[tid] - sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
