// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: element-type: x and mask have different element types
// Two inputs of different element types (float data, int mask): one vector type
// would serve both (the pass keeps one vector type for every array).
// kltrans: launch masked grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void masked(const float* x, const int* mask, float* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    const float v = x[i];
    y[i] = mask[i] ? v : 0.0f;
  }
}
