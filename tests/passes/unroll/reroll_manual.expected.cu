// RUN: kltrans opt -p 'reroll'
// Four statements equal up to the literals 0, 1, 2, 3 fold into one loop.
__global__ void gather4(const float* x, float* y, int n) {
  int t = threadIdx.x + blockDim.x * blockIdx.x;
  for (int i = 0; i < 4; ++i) y[4 * t + i] = 2.0f * x[4 * t + i];
}
