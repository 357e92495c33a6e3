// RUN: kltrans opt -p 'smem-reduce'
// CHECK-SKIP: shape: is not `for (int off = 2^k; off > 0; off >>= 1)`
// A doubling offset loop (an inclusive scan, not a halving reduction): left alone.
// kltrans: launch warp_scan grid=ceil_div(n, 32) block=32
extern "C" __global__ void warp_scan(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  for (int off = 1; off < 32; off <<= 1) {
    float u = __shfl_up_sync(0xffffffff, v, off);
    if ((threadIdx.x & 31) >= off) v += u;
    v += 0.0f * __shfl_xor_sync(0xffffffff, v, off);
  }
  if (i < n) y[i] = v;
}
