// RUN: kltrans opt -p 'scalarize-stream'
// GATE: tests/data/workloads/vectorize_stream_silu
// The shape vectorize-stream writes for a body with a temporary (vs_silu_temp_for.cu):
// the per-lane blocks are regenerated from the fallback loop and compared; the vector
// path goes, and so does the flag declaration the pass wrote.
// kltrans: launch silu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = v / (1.0f + expf(-v));
  }
}
