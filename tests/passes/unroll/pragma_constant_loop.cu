// RUN: kltrans opt -p 'unroll{factor=4}'
// Four loads per thread from a constant-trip loop: #pragma unroll 4 is inserted above it.
__global__ void sum4(const float* __restrict__ x, float* __restrict__ out, int n) {
  int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) {
    if (base + k < n) acc += x[base + k];
  }
  if (base < n) out[base / 4] = acc;
}
