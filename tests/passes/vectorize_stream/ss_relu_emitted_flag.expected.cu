// RUN: kltrans opt -p 'scalarize-stream'
// GATE: tests/data/workloads/vectorize_stream_relu
// The shape vectorize-stream writes after grid-stride (vs_relu_after_grid_stride.cu):
// the vector path goes, and so does the flag declaration the pass wrote (exactly its
// form, just before the dispatch, used by nothing else).
// kltrans: launch relu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  const size_t nthreads = (size_t)gridDim.x * blockDim.x;
  for (; tid < n; tid += nthreads) {
    y[tid] = fmaxf(x[tid], 0.0f);
  }
}
