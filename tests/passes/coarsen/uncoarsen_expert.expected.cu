// RUN: kltrans opt -p 'uncoarsen'
// A hand-coarsened copy kernel (counter k, element index idx): back to one element per
// thread, the grid multiplied back by the factor.
// kltrans: launch copy grid=ceil_div(n, 256) block=256
__global__ void copy(const int* __restrict__ src, int* __restrict__ dst, int n) {
  int base = blockIdx.x * blockDim.x + threadIdx.x;
  if (base < n) dst[base] = src[base];
}
