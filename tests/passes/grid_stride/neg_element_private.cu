// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: element-private: reads blockIdx.x
// The body reads blockIdx.x besides i (one block per row of the bias): once a thread
// strides to other elements, blockIdx.x no longer names their row.
// kltrans: launch add_row_bias grid=ceil_div(n, 256) block=256
__global__ void add_row_bias(const float* x, const float* row_bias, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + row_bias[blockIdx.x];
}
