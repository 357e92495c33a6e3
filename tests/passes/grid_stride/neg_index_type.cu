// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: index-type: (32-bit) but the bound n is size_t (64-bit)
// A 32-bit int index against a size_t bound: `i += blockDim.x * gridDim.x` would overflow
// before it reaches a bound above 2^31.
// kltrans: launch negate grid=ceil_div(n, 256) block=256
__global__ void negate(const float* x, float* y, size_t n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -x[i];
}
