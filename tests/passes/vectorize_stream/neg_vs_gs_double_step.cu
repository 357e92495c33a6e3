// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: whole-range: cannot show that the threads' starts
// A grid-stride loop that steps by twice the grid (every other chunk of elements): the
// vectors would cover other elements than the scalar loop does.
// kltrans: launch relu_even grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void relu_even(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 2 * blockDim.x * gridDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}
