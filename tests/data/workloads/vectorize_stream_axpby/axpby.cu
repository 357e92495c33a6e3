// kltrans: launch axpby grid=ceil_div(n, 256) block=256
extern "C" __global__ void axpby(const float* x, const float* y, float* z, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = a * x[i] + b * y[i];
}
