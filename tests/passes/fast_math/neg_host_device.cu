// RUN: kltrans opt -p 'fast-math{ops=exp}' --assume 'tolerance(1e-3)'
// CHECK-SKIP: device-only: also compiled for the host
// The helper is __host__ __device__: __expf does not exist in host code, so the host
// compilation would fail.
__host__ __device__ inline float softplus(float v) {
  return logf(1.0f + expf(v));
}

__global__ void softplus_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = softplus(x[i]);
}
