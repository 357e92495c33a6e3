// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: element-wise: `__syncthreads()` is a call with side effects
// A barrier in the body: the vector path runs a quarter of the iterations, so threads
// would meet it a different number of times.
// kltrans: launch relu_sync grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void relu_sync(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    __syncthreads();
    y[i] = v > 0.0f ? v : 0.0f;
  }
}
