// RUN: kltrans opt -p 'uncoalesce-remap'
// CHECK-SKIP: element-private: the body uses the counter k
// The body also uses the chunk position k (a per-position weight): after the inverse
// element i would get another weight.
// kltrans: launch weigh grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void weigh(const float* __restrict__ x, const float* __restrict__ w,
                                 float* __restrict__ y, int n) {
  for (int k = 0; k < 4; ++k) {
    int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
    if (i < n) y[i] = w[k] * x[i];
  }
}
