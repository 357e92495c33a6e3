// RUN: kltrans opt -p 'fast-math{ops=div}'
// CHECK-SKIP: tolerance: relative tolerance is not known
// Nothing says how much error the workload accepts: __fdividef is not applied.
__global__ void normalize(const float* x, const float* norm, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / norm[blockIdx.y];
}
