// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// x is only read: it becomes const __restrict__; y is written: __restrict__ only.
__global__ void axpy(float a, float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
