// RUN: kltrans opt -p 'reroll'
// Four statements equal up to the literals 0, 1, 2, 3 fold into one loop.
__global__ void gather4(const float* x, float* y, int n) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  y[4 * t + 0] = 2.0f * x[4 * t + 0];
  y[4 * t + 1] = 2.0f * x[4 * t + 1];
  y[4 * t + 2] = 2.0f * x[4 * t + 2];
  y[4 * t + 3] = 2.0f * x[4 * t + 3];
}
