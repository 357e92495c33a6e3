// RUN: kltrans opt -p 'smem-reduce'
// CHECK-SKIP: shuffled-type: have different types
// A float and an int travel in one loop: one scratch array holds one type.
// kltrans: launch sum_count grid=ceil_div(n, 256) block=256
extern "C" __global__ void sum_count(const float* x, float* sum, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  int c = i < n && x[i] > 0.0f;
  for (int off = 16; off > 0; off >>= 1) {
    v += __shfl_xor_sync(0xffffffff, v, off);
    c += __shfl_xor_sync(0xffffffff, c, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(sum, v);
    atomicAdd(count, c);
  }
}
