// RUN: kltrans opt -p 'unroll{factor=full,style=manual}'
// Manual unrolling copies the body once per iteration, the induction variable replaced by 0..3.
__global__ void scale4(const float* x, float* y, float v) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  y[4 * t + 0] = v * x[4 * t + 0];
  y[4 * t + 1] = v * x[4 * t + 1];
  y[4 * t + 2] = v * x[4 * t + 2];
  y[4 * t + 3] = v * x[4 * t + 3];
}
