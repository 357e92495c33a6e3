// One float per thread.
// kltrans: launch copy_scalar grid=ceil_div(n, 256) block=256
extern "C" __global__ void copy_scalar(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
