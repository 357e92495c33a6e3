// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: loads-first: `p[i]` is read after a store to m_out, which may be the same memory
// p[i] (and g[i]) are read after the store to m_out; without no_alias (or __restrict__
// parameters) m_out may be p itself, and the vector path would read p before the store.
// kltrans: launch momentum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void momentum(const float* p, const float* m, const float* g, float* p_out,
                                    float* m_out, float lr, float beta, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    m_out[i] = beta * m[i];
    p_out[i] = p[i] - lr * (m_out[i] + g[i]);
  }
}
