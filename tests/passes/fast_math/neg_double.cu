// RUN: kltrans opt -p 'fast-math{ops=div}' --assume 'tolerance(1e-4)'
// CHECK-SKIP: float-operands: is double
// The division is in double precision: __fdividef is single precision, so it would lose
// 29 bits of the result.
__global__ void ratio(const double* a, const double* b, double* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] / b[i];
}
