// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: map-loop: `break;` leaves the body early
// The loop stops at the first NaN: the vector path could not stop inside a vector.
// kltrans: launch copy_until_nan grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void copy_until_nan(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float v = x[i];
    if (v != v) break;
    y[i] = v;
  }
}
