// RUN: kltrans opt -p 'uncoarsen'
// CHECK-SKIP: coarsened-index: does not scale blockDim.x by the loop's 4
// The loop takes four chunks but the base index scales the block by 2: the chunks of
// neighbouring blocks overlap, and there is no one-per-thread kernel this came from.
// kltrans: launch copy grid=ceil_div(ceil_div(n, 256), 4) block=256
__global__ void copy(const float* src, float* dst, int n) {
  int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  for (int c = 0; c < 4; ++c) {
    int j = i + c * blockDim.x;
    if (j < n) dst[j] = src[j];
  }
}
