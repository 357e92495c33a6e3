// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: sole-work: runs outside the coarsened loop
// A 4-way coarsened scale that also marks its block done after the loop: with the grid
// divided by 4 again, fewer blocks would mark themselves.
// kltrans: launch scale_mark grid=ceil_div(ceil_div(n, 256), 4) block=256
extern "C" __global__ void scale_mark(const float* x, float* y, int* done, float a, int n) {
  int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  for (int c = 0; c < 4; ++c) {
    int j = i + c * blockDim.x;
    if (j < n) y[j] = a * x[j];
  }
  done[blockIdx.x] = 1;
}
