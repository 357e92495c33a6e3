// RUN: kltrans opt -p 'uncoarsen'
// CHECK-SKIP: contract-shape: is not ceil_div(G, 4)
// The grid is written as ceil_div(n, 1024): it is right for the coarsened kernel, but
// not in the ceil_div(G, 4) form the pass knows how to multiply back.
// kltrans: launch copy grid=ceil_div(n, 1024) block=256
__global__ void copy(const float* src, float* dst, int n) {
  int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  for (int c = 0; c < 4; ++c) {
    int j = i + c * blockDim.x;
    if (j < n) dst[j] = src[j];
  }
}
