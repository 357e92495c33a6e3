// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: vector-flag: the pass cannot write one
// A grid-stride map over the first half of the array with no flag declared: the pass
// writes the flag's length test only for a plain name, not for `n / 2`.
// kltrans: launch half_relu grid=min(ceil_div(n, 512), 1024) block=256
extern "C" __global__ void half_relu(const float* x, float* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n / 2; i += gridDim.x * blockDim.x) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}
