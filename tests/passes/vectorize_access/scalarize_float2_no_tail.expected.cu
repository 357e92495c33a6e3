// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,8)' --assume 'n%2==0'
// A float2 kernel with no tail (valid for even n, the fact it relied on): scalarized, it
// is valid for every n. The grid is divided by 2 around the whole expression.
// kltrans: launch mul grid=(n+255)/256 block=256
__global__ void mul(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * b[i];
}
