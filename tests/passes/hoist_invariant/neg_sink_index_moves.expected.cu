// RUN: kltrans opt -p 'sink-invariant'
// CHECK-SKIP: still-invariant: depends on i, assigned in the loop
// i moves inside the loop: x[i] there would read other elements than x_i did.
__global__ void first_times(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float x_i = x[i];
  for (int k = 0; k < 4; ++k) {
    if (i < n) y[i] = x_i * (float)k;
    i += blockDim.x * gridDim.x;
  }
}
