// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: map-loop: `x[i + 1]` is not an element `X[i]`
// A body with a temporary that also reads the next element (a stencil, not a map): each
// lane would need an element of the next vector.
// kltrans: launch diff1 grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void diff1(const float* x, float* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = i + 1 < n ? x[i + 1] - v : 0.0f;
  }
}
