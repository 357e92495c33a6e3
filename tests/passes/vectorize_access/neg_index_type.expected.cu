// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: index-type: (32-bit) but the bound n is long long (64-bit)
// A 32-bit index against a 64-bit bound: 4 * i + 3 would overflow first.
// kltrans: launch negate grid=ceil_div(n, 256) block=256
__global__ void negate(const float* x, float* y, long long n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -x[i];
}
