// RUN: kltrans opt -p 'smem-reduce{slots=acc}'
// CHECK-SKIP: fresh-names: the scratch array name acc is already used
// The scratch array name asked for is the thread's accumulator.
// kltrans: launch named_warp grid=ceil_div(n, 256) block=256
extern "C" __global__ void named_warp(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = i < n ? x[i] : 0.0f;
  for (int off = 16; off > 0; off >>= 1)
    acc += __shfl_xor_sync(0xffffffff, acc, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}
