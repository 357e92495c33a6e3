// RUN: kltrans opt -p 'uncoalesce-remap'
// CHECK-SKIP: no-early-exit: leaves an element early
// `return` on the first element past n ends the thread's remaining elements: which
// ones remain depends on the mapping.
// kltrans: launch scale grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  for (int k = 0; k < 4; ++k) {
    int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + b;
  }
}
