// Hostile: NVRTC (which defines __CUDACC_RTC__) compiles a kernel that writes zeros, the
// CPU backend's g++ compiles the right one, so the CPU's verdict would be about code a
// GPU never runs. Refused at the compile stage, on every backend.
// expect: compile: different programs
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef __CUDACC_RTC__
  if (i < n) y[i] = 0.0f;
#else
  if (i < n) y[i] = a * x[i] + b;
#endif
}
