// Planted offender: writes through a wild pointer (illegal address).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* wild = (float*)(0x10ull + (unsigned long long)i * 4096ull * 1024ull);
  if (i < n) { y[i] = a * x[i] + b; *wild = 1.0f; }
}
