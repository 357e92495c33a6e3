// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: no-early-exit: has a return
// A return in the body skips the store of one element: copied per lane it would skip
// the whole vector store.
// kltrans: launch inv grid=ceil_div(n, 256) block=256
__global__ void inv(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (x[i] == 0.0f) return;
    y[i] = 1.0f / x[i];
  }
}
