// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(x,16)'
// CHECK-SKIP: aligned: y must be 16-byte aligned
// Only x is known to be 16-byte aligned; y may be an offset view (y = base + 1) where a
// float4 store would fault. Alignment is a fact of the allocation: it must be stated.
// kltrans: launch copy grid=ceil_div(n, 256) block=256
__global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
