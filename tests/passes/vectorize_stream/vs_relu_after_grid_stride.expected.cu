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
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0;
  if (vec_ok) {
    const float4* xv = reinterpret_cast<const float4*>(x);
    float4* yv = reinterpret_cast<float4*>(y);
    const int nv = n >> 2;
    for (; tid < nv; tid += nthreads) {
      const float4 t = xv[tid];
      float4 o;
      o.x = fmaxf(t.x, 0.0f);
      o.y = fmaxf(t.y, 0.0f);
      o.z = fmaxf(t.z, 0.0f);
      o.w = fmaxf(t.w, 0.0f);
      yv[tid] = o;
    }
  } else {
    for (; tid < n; tid += nthreads) {
      y[tid] = fmaxf(x[tid], 0.0f);
    }
  }
}
