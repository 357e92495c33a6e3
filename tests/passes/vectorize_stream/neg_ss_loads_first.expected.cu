// RUN: kltrans opt -p 'scalarize-stream'
// CHECK-SKIP: loads-first: `m[j]` is read after a store to p_out, which may be the same memory
// vs_momentum_two_outputs_after_grid_stride's output without its __restrict__ parameters
// (and no no_alias assumed): the vector path is not known to be valid, so it is no inverse
// of the loop and stays.
// kltrans: launch momentum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void momentum(const float* p, const float* m, const float* g, float* p_out,
                                    float* m_out, float lr, float beta, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t step = (size_t)blockDim.x * gridDim.x;
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(p) % 16 == 0 && reinterpret_cast<size_t>(m) % 16 == 0 && reinterpret_cast<size_t>(g) % 16 == 0 && reinterpret_cast<size_t>(p_out) % 16 == 0 && reinterpret_cast<size_t>(m_out) % 16 == 0;
  if (vec_ok) {
    const float4* p_vec = reinterpret_cast<const float4*>(p);
    const float4* m_vec = reinterpret_cast<const float4*>(m);
    const float4* g_vec = reinterpret_cast<const float4*>(g);
    float4* p_out_vec = reinterpret_cast<float4*>(p_out);
    float4* m_out_vec = reinterpret_cast<float4*>(m_out);
    const int nv = n >> 2;
    for (; j < nv; j += step) {
      const float4 p4 = p_vec[j];
      const float4 m4 = m_vec[j];
      const float4 g4 = g_vec[j];
      float4 p_out4;
      float4 m_out4;
      p_out4.x = p4.x - lr * (beta * m4.x + g4.x);
      m_out4.x = beta * m4.x + g4.x;
      p_out4.y = p4.y - lr * (beta * m4.y + g4.y);
      m_out4.y = beta * m4.y + g4.y;
      p_out4.z = p4.z - lr * (beta * m4.z + g4.z);
      m_out4.z = beta * m4.z + g4.z;
      p_out4.w = p4.w - lr * (beta * m4.w + g4.w);
      m_out4.w = beta * m4.w + g4.w;
      p_out_vec[j] = p_out4;
      m_out_vec[j] = m_out4;
    }
  } else {
    for (; j < n; j += step) {
      p_out[j] = p[j] - lr * (beta * m[j] + g[j]);
      m_out[j] = beta * m[j] + g[j];
    }
  }
}
