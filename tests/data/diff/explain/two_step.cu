// kltrans: launch scale4 grid=ceil_div(n, 1024) block=256
// Each thread scales four consecutive elements.
__global__ void scale4(const float* x, float* y, float v, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * t + 3 < n) {
    for (int i = 0; i < 4; ++i) y[4 * t + i] = v * x[4 * t + i];
  }
}
