// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: element-type: y points to double
// Doubles are 8 bytes: four of them do not fit a 16-byte vector (double2 is the widest).
// kltrans: launch dscale grid=ceil_div(n, 256) block=256
__global__ void dscale(const double* x, double* y, double a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
