// Over a device limit: 1024 threads of over 100 registers each need more registers
// than a multiprocessor has.
// expect: compile: more than a multiprocessor has
// kltrans: launch scale grid=ceil_div(n, 1024) block=1024
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v[160];
  #pragma unroll
  for (int k = 0; k < 160; ++k) v[k] = i + k < n ? x[i + k] * (k + 1) : 0.0f;
  float acc = 0.0f;
  #pragma unroll
  for (int k = 0; k < 160; ++k) acc += v[k] * v[159 - k];
  if (i < n) y[i] = a * x[i] + b + 0.0f * acc;
}
