// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_silu
// A body of two statements: the element is read into a temporary, then the store uses it
// (index threadIdx.x + blockIdx.x * blockDim.x, a for loop declaring it). The vector path
// loads x once per float4 and runs the body once per lane, in its own block.
// kltrans: launch silu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}
