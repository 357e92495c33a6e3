// RUN: kltrans opt -p 'smem-reduce'
// CHECK-SKIP: full-mask: is not all 32 lanes
// A half-warp reduction under a 16-lane mask: __syncwarp() over the whole warp would not
// be equivalent.
// kltrans: launch half_sums grid=ceil_div(n, 16) block=16
extern "C" __global__ void half_sums(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  for (int off = 8; off > 0; off >>= 1)
    v += __shfl_xor_sync(0x0000ffff, v, off);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
