// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_silu
// The index declared before the loop (as grid-stride{fold=false} writes it), striding by a
// named (size_t)gridDim.x * blockDim.x; the temporary is reassigned before the store. No
// flag is declared: the pass declares one; the vector path advances idx itself.
// kltrans: launch silu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  int idx = threadIdx.x + blockDim.x * blockIdx.x;
  const size_t nthreads = (size_t)gridDim.x * blockDim.x;
  for (; idx < n; idx += nthreads) {
    float v = x[idx];
    v = v / (1.0f + expf(-v));
    y[idx] = v;
  }
}
