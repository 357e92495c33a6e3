// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: element-private: reads blockIdx.x
// Block-wise dequantization: one scale per block of 256 elements, picked with
// blockIdx.x. A coarsened block covers four such blocks, so blockIdx.x no longer names
// the element's scale.
// kltrans: launch dequant grid=ceil_div(n, 256) block=256
__global__ void dequant(const int* q, const float* scales, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scales[blockIdx.x] * (float)q[i];
}
