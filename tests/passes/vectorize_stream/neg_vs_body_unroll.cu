// RUN: kltrans opt -p 'vectorize-stream{unroll=2}'
// CHECK-SKIP: map-loop: unroll > 1 takes only a body that is one store `Y[i] = E(X[i])`
// Several vectors in flight per thread are written only for the one-store form.
// kltrans: launch silu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}
