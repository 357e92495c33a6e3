// RUN: kltrans opt -p 'fast-math{ops=fma}' --assume 'tolerance(0)'
// CHECK-SKIP: tolerance: an exact comparison is below one float ulp
// The output is compared bit for bit: fmaf rounds once where a * b + c rounds twice.
__global__ void mad(const float* a, const float* b, const float* c, float* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = a[i] * b[i] + c[i];
}
