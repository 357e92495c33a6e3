// RUN: kltrans opt -p 'vectorize-access{width=2}' --assume 'aligned(x,8)' --assume 'aligned(y,8)'
// GATE: tests/data/workloads/vectorize_stream_relu
// The output of coarsen/coarsen_relu_for_vectorize.cu (factor 2, threadIdx.x first, a
// braced body with a conditional): float2 accesses with a scalar tail.
// kltrans: launch relu grid=ceil_div(ceil_div(n, 128), 2) block=128
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x * 2;
  for (int c = 0; c < 2; ++c) {
    int j = idx + c * blockDim.x;
    if (j < n) {
      y[j] = x[j] > 0.0f ? x[j] : 0.0f;
    }
  }
}
