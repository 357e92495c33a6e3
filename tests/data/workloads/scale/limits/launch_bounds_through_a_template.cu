// Over a device limit: the launch bounds, spelled through a template constant the launch
// contract cannot read, allow 128 threads; the contract launches 256.
// expect: compile: exceeds the kernel's launch bounds (128
// kltrans: launch scale grid=ceil_div(n, 256) block=256
template <int N> struct Half { static constexpr int value = N / 2; };
extern "C" __global__ void __launch_bounds__(Half<256>::value) scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
