// Hostile: a copy through arithmetic (x + 0.0f), which is exact for every value but -0.0
// (it becomes +0.0). The gate's exact float inputs hold -0.0, and exact is bit-exact in
// the sign of zero.
// expect: a zero of the other sign
// kltrans: launch copy_scalar grid=ceil_div(n, 256) block=256
extern "C" __global__ void copy_scalar(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 0.0f;
}
