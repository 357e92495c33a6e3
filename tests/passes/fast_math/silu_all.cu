// RUN: kltrans opt -p 'fast-math' --assume 'tolerance(1e-4)'
// SiLU through a device helper: the division becomes __fdividef and expf becomes __expf.
// The index arithmetic (blockIdx.x * blockDim.x + threadIdx.x) is integer: not a site.
__device__ __forceinline__ float sigmoid(float v) {
  return 1.0f / (1.0f + expf(-v));
}

__global__ void silu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = v * sigmoid(v);
  }
}
