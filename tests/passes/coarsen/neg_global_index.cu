// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: global-index: is not the global thread index
// Each thread already handles the pair 2i, 2i+1 (`i` is twice the thread index):
// coarsening needs the plain global index.
// kltrans: launch pairs grid=ceil_div(n, 512) block=256
__global__ void pairs(const float2* x, float* y, int n) {
  int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i / 2] = x[i / 2].x + x[i / 2].y;
}
