// RUN: kltrans opt -p 'vectorize-views'
// CHECK-SKIP: aligned: must be 16-byte aligned
// Nothing says x is 16-byte aligned (it may be an offset view of an allocation).
__global__ void copy4(const float* x, float4* out, int n4) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n4) out[t] = make_float4(x[4 * t], x[4 * t + 1], x[4 * t + 2], x[4 * t + 3]);
}
