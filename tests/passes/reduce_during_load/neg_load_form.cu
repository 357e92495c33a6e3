// RUN: kltrans opt -p 'reduce-during-load' --assume reassoc
// CHECK-SKIP: staged-load: outside the load
// The kernel also copies its element through i: with two elements per thread the copy
// would cover only half of them.
// kltrans: launch copy_and_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void copy_and_sum(const float* x, float* y, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  if (i < n) y[i] = x[i];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
