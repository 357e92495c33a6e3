// RUN: kltrans opt -p 'unroll{factor=full,style=manual}'
// Manual unrolling copies the body once per iteration, the induction variable replaced by 0..3.
__global__ void scale4(const float* x, float* y, float v) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < 4; ++i) y[4 * t + i] = v * x[4 * t + i];
}
