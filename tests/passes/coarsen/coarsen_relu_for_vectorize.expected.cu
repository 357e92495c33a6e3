// RUN: kltrans opt -p 'coarsen{factor=2}'
// GATE: tests/data/workloads/vectorize_stream_relu
// A ReLU written threadIdx.x + blockIdx.x * blockDim.x, coarsened by 2;
// vectorize_access/vec_relu_after_coarsen.cu continues from this output.
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
