// RUN: kltrans opt -p 'coarsen{factor=2}'
// GATE: tests/data/workloads/vectorize_stream_relu
// A ReLU written threadIdx.x + blockIdx.x * blockDim.x, coarsened by 2;
// vectorize_access/vec_relu_after_coarsen.cu continues from this output.
// kltrans: launch relu grid=ceil_div(n, 128) block=128
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int idx = threadIdx.x + blockIdx.x * blockDim.x;
  if (idx < n) {
    y[idx] = x[idx] > 0.0f ? x[idx] : 0.0f;
  }
}
