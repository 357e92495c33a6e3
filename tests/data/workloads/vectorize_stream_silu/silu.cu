// kltrans: launch silu grid=ceil_div(n, 256) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}
