// RUN: kltrans opt -p 'uncoalesce-remap'
// CHECK-SKIP: index-form: is the contiguous chunk index, not the block-strided one
// Already one contiguous chunk per thread: nothing to undo.
// kltrans: launch scale grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i < n) y[i] = a * x[i] + b;
  }
}
