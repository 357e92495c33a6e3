// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: unit-stride: stride 2 in threadIdx.x
// Downsampling reads every other element: x[2 * i] moves by two elements per thread, so
// four consecutive x are not what four consecutive outputs read.
// kltrans: launch downsample grid=ceil_div(n, 256) block=256
__global__ void downsample(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[2 * i];
}
