// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_relu
// The output of grid_stride/gs_relu_tid_named_stride.cu: a loop with no initializer
// (tid declared before it, not used after it) striding by a named
// (size_t)gridDim.x * blockDim.x. No flag is declared, so the pass declares one before
// the dispatch (n % 4 and the 16-byte alignment of x and y, tested at run time); the
// vector path advances tid itself.
// kltrans: launch relu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  const size_t nthreads = (size_t)gridDim.x * blockDim.x;
  for (; tid < n; tid += nthreads) {
    y[tid] = fmaxf(x[tid], 0.0f);
  }
}
