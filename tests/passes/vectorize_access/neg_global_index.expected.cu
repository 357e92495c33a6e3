// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: global-index: is not the global thread index
// The block size is hard-coded in the index (256, not blockDim.x): the index is right
// only for the launch it was written for, and the pass will not build on it.
// kltrans: launch copy grid=ceil_div(n, 256) block=256
__global__ void copy(const float* src, float* dst, int n) {
  int i = threadIdx.x + blockIdx.x * 256;
  if (i < n) dst[i] = src[i];
}
