// RUN: kltrans opt -p 'unroll{factor=full}'
// CHECK-SKIP: body-fits: tokens
// 128 copies of a large body would blow the instruction cache and the registers: refused.
__global__ void poly(const float* x, float* y) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[t];
  float acc = 0.0f;
  for (int k = 0; k < 128; ++k) {
    float p = v * v * v + 3.0f * v * v - 2.0f * v + 1.0f;
    float q = (p > 0.0f ? p : -p) * 0.5f + (v < 1.0f ? v : 1.0f) * (float)k;
    acc += p * q - (q > p ? q : p) + (acc > 100.0f ? -1.0f : 1.0f) * 0.25f;
  }
  y[t] = acc;
}
