// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: index-type: i is a float, not an integer type
// Whoever wrote a float index: the chunk arithmetic needs an integer.
// kltrans: launch weird grid=ceil_div(n, 256) block=256
__global__ void weird(const float* x, float* y, int n) {
  float i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[(int)i] = x[(int)i];
}
