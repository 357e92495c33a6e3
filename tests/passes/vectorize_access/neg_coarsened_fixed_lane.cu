// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: global-index: j is not declared by a statement
// A loop that looks coarsened but steps its element by a fixed 32 instead of
// blockDim.x: which elements each j covers depends on the block size, so the element
// guard is not accepted as a global index.
// kltrans: launch scale32 grid=ceil_div(ceil_div(n, 256), 4) block=256
extern "C" __global__ void scale32(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  for (int c = 0; c < 4; ++c) {
    int j = i + c * 32;
    if (j < n) y[j] = a * x[j];
  }
}
