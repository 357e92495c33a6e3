// RUN: kltrans opt -p 'fast-math{ops=rsqrt}' --assume 'tolerance(1e-5)'
// 1.0f / sqrtf(var + eps) becomes rsqrtf(var + eps) (2 ulp, within 1e-6); the parentheses
// that the multiplication needed around the division go with it.
#define WARP 32
__global__ void layernorm_warp(const float* __restrict__ in, float* __restrict__ out,
                               const float* __restrict__ gamma, int rows, int cols, float eps) {
  int gid = threadIdx.x + blockDim.x * blockIdx.x;
  int row = gid / WARP;
  int lane = gid % WARP;
  if (row >= rows) return;
  const float* x = in + row * cols;
  float s = 0.0f, ss = 0.0f;
  for (int c = lane; c < cols; c += WARP) {
    s += x[c];
    ss += x[c] * x[c];
  }
  for (int o = WARP / 2; o > 0; o /= 2) {
    s += __shfl_down_sync(0xffffffffu, s, o);
    ss += __shfl_down_sync(0xffffffffu, ss, o);
  }
  s = __shfl_sync(0xffffffffu, s, 0);
  ss = __shfl_sync(0xffffffffu, ss, 0);
  float mean = s / cols;
  float var = ss / cols - mean * mean;
  for (int c = lane; c < cols; c += WARP)
    out[row * cols + c] = gamma[c] * (x[c] - mean) * (1.0f / sqrtf(var + eps));
}
