// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: index-form: names blockDim.x 0 times
// The block offset is computed in a variable of its own: the index is the global index,
// but there is no blockIdx.x * blockDim.x in it to scale by the factor.
// kltrans: launch shift grid=ceil_div(n, 256) block=256
__global__ void shift(const float* x, float* y, float s, int n) {
  const int block_start = blockIdx.x * blockDim.x;
  int i = block_start + threadIdx.x;
  if (i < n) y[i] = x[i] + s;
}
