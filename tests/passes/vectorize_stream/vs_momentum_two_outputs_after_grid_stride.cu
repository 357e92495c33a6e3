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
  for (; j < n; j += step) {
    p_out[j] = p[j] - lr * (beta * m[j] + g[j]);
    m_out[j] = beta * m[j] + g[j];
  }
}
