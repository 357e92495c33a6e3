// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// GATE: tests/data/workloads/vectorize_stream_momentum
// Two outputs (m_out, p_out) from three inputs and a temporary: each input is loaded once
// as a float4, each output stored once; index threadIdx.x + blockIdx.x * blockDim.x. p[i] is
// read after the store to m_out: no_alias is assumed (m_out may not be p's memory).
// kltrans: launch momentum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void momentum(const float* p, const float* m, const float* g, float* p_out,
                                    float* m_out, float lr, float beta, int n) {
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(m) % 16 == 0 && reinterpret_cast<size_t>(g) % 16 == 0 && reinterpret_cast<size_t>(p) % 16 == 0 && reinterpret_cast<size_t>(m_out) % 16 == 0 && reinterpret_cast<size_t>(p_out) % 16 == 0;
  if (vec_ok) {
    const float4* m_vec = reinterpret_cast<const float4*>(m);
    const float4* g_vec = reinterpret_cast<const float4*>(g);
    const float4* p_vec = reinterpret_cast<const float4*>(p);
    float4* m_out_vec = reinterpret_cast<float4*>(m_out);
    float4* p_out_vec = reinterpret_cast<float4*>(p_out);
    const int nv = n >> 2;
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    for (; i < nv; i += (blockDim.x * gridDim.x)) {
      const float4 m4 = m_vec[i];
      const float4 g4 = g_vec[i];
      const float4 p4 = p_vec[i];
      float4 m_out4;
      float4 p_out4;
      {
        float mi = beta * m4.x + g4.x;
        m_out4.x = mi;
        p_out4.x = p4.x - lr * mi;
      }
      {
        float mi = beta * m4.y + g4.y;
        m_out4.y = mi;
        p_out4.y = p4.y - lr * mi;
      }
      {
        float mi = beta * m4.z + g4.z;
        m_out4.z = mi;
        p_out4.z = p4.z - lr * mi;
      }
      {
        float mi = beta * m4.w + g4.w;
        m_out4.w = mi;
        p_out4.w = p4.w - lr * mi;
      }
      m_out_vec[i] = m_out4;
      p_out_vec[i] = p_out4;
    }
  } else {
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
      float mi = beta * m[i] + g[i];
      m_out[i] = mi;
      p_out[i] = p[i] - lr * mi;
    }
  }
}
