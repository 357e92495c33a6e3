// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_momentum
// The index declared before the loop, no temporaries: p_out is stored before m[j] and g[j]
// are read again for m_out, which the vector path (loading every input first) may do only
// when p_out is not the memory of m or g: the __restrict__ parameters promise it.
// kltrans: launch momentum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void momentum(const float* __restrict__ p, const float* __restrict__ m,
                                    const float* __restrict__ g, float* __restrict__ p_out,
                                    float* __restrict__ m_out, float lr, float beta, int n) {
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
