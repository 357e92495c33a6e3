// kltrans: launch leaky_relu grid=ceil_div(count, 256) block=256
__global__ void leaky_relu(const float* in, float* out, float slope, int count) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < count) {
    float v = in[idx];
    out[idx] = v > 0.0f ? v : slope * v;
  }
}
