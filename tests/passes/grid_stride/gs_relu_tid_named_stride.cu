// RUN: kltrans opt -p 'grid-stride{fold=false,stride=nthreads}'
// GATE: tests/data/workloads/vectorize_stream_relu
// A ReLU with a const named tid (threadIdx.x + blockDim.x * blockIdx.x) and a braced
// body: the guard becomes a grid-stride loop over a named stride (const dropped from
// tid); vectorize_stream/vs_relu_after_grid_stride.cu continues from this output.
// kltrans: launch relu grid=ceil_div(n, 256) block=256
extern "C" __global__ void relu(const float* x, float* y, int n) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) {
    y[tid] = fmaxf(x[tid], 0.0f);
  }
}
