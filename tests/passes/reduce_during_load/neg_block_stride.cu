// RUN: kltrans opt -p 'reduce-during-load' --assume reassoc
// CHECK-SKIP: block-stride: would not be one block further
// The index steps by 512 per block while the block has 256 threads: the second element
// would be 512 further, not one block further.
// kltrans: launch strided_sum grid=ceil_div(n, 512) block=256
extern "C" __global__ void strided_sum(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * 512 + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, sdata[0]);
}
