// Planted offender: never returns (the gate's worker must time out and move on).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  volatile const float* vx = x;
  while (vx[0] < 1.0e30f) { }
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
