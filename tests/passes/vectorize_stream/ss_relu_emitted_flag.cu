// RUN: kltrans opt -p 'scalarize-stream'
// GATE: tests/data/workloads/vectorize_stream_relu
// The shape vectorize-stream writes after grid-stride (vs_relu_after_grid_stride.cu):
// the vector path goes, and so does the flag declaration the pass wrote (exactly its
// form, just before the dispatch, used by nothing else).
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
