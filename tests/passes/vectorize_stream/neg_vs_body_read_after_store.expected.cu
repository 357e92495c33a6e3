// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: loads-first: `y[i]` is read after a store to y: the vector path loads every input before it stores
// The body reads back the element it has just stored: the vector path, which loads every
// input before any store, would read the old value.
// kltrans: launch twice grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void twice(const float* x, float* y, float* z, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = 2.0f * x[i];
    z[i] = y[i] + 1.0f;
  }
}
