// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_silu
// The index declared before the loop (as grid-stride{fold=false} writes it), striding by a
// named (size_t)gridDim.x * blockDim.x; the temporary is reassigned before the store. No
// flag is declared: the pass declares one; the vector path advances idx itself.
// kltrans: launch silu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  int idx = threadIdx.x + blockDim.x * blockIdx.x;
  const size_t nthreads = (size_t)gridDim.x * blockDim.x;
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0;
  if (vec_ok) {
    const float4* x_vec = reinterpret_cast<const float4*>(x);
    float4* y_vec = reinterpret_cast<float4*>(y);
    const int nv = n >> 2;
    for (; idx < nv; idx += nthreads) {
      const float4 x4 = x_vec[idx];
      float4 y4;
      {
        float v = x4.x;
        v = v / (1.0f + expf(-v));
        y4.x = v;
      }
      {
        float v = x4.y;
        v = v / (1.0f + expf(-v));
        y4.y = v;
      }
      {
        float v = x4.z;
        v = v / (1.0f + expf(-v));
        y4.z = v;
      }
      {
        float v = x4.w;
        v = v / (1.0f + expf(-v));
        y4.w = v;
      }
      y_vec[idx] = y4;
    }
  } else {
    for (; idx < n; idx += nthreads) {
      float v = x[idx];
      v = v / (1.0f + expf(-v));
      y[idx] = v;
    }
  }
}
