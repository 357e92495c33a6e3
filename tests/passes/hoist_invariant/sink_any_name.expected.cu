// RUN: kltrans opt -p 'sink-invariant{temp=any}'
// An expert's own temporary (s) is sunk too with temp=any; its inverse is
// hoist-invariant{temp=s}.
__global__ void scale_tiles(float* __restrict__ data, const float* __restrict__ scale, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (base + 8 > n) return;
  for (int i = 0; i < 8; ++i) data[base + i] *= scale[blockIdx.y];
}
