// RUN: kltrans opt -p 'vectorize-access{width=2}' --assume 'aligned(x,8)' --assume 'aligned(y,8)'
// GATE: tests/data/workloads/vectorize_stream_relu
// The output of coarsen/coarsen_relu_for_vectorize.cu (factor 2, threadIdx.x first, a
// braced body with a conditional): float2 accesses with a scalar tail.
// kltrans: launch relu grid=ceil_div(ceil_div(ceil_div(n, 128), 2), 2) block=128
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x * 2;
  for (int c = 0; c < 2; ++c) {
    int j = idx + c * blockDim.x;
    if (2 * j + 1 < n) {
      const float2 x2 = reinterpret_cast<const float2*>(x)[j];
      float2 y2;
      {
        y2.x = x2.x > 0.0f ? x2.x : 0.0f;
      }
      {
        y2.y = x2.y > 0.0f ? x2.y : 0.0f;
      }
      reinterpret_cast<float2*>(y)[j] = y2;
    } else {
      for (int k = 2 * j; k < n; ++k) {
        y[k] = x[k] > 0.0f ? x[k] : 0.0f;
      }
    }
  }
}
