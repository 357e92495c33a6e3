// RUN: kltrans opt -p 'coalesce-remap'
// CHECK-SKIP: no-early-exit: leaves an element early
// Copy up to the first negative value of the chunk: `break` ties the stop to the
// thread's own chunk, which the remap changes.
// kltrans: launch copy_until grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void copy_until(const float* __restrict__ x, float* __restrict__ y,
                                      int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i >= n || x[i] < 0.0f) break;
    y[i] = x[i];
  }
}
