// Planted offender: leaves the second half of the output unwritten.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2 || (n == 1 && i == 0)) y[i] = a * x[i] + b;
}
