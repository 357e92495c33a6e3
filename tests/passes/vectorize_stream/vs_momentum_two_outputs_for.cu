// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// GATE: tests/data/workloads/vectorize_stream_momentum
// Two outputs (m_out, p_out) from three inputs and a temporary: each input is loaded once
// as a float4, each output stored once; index threadIdx.x + blockIdx.x * blockDim.x. p[i] is
// read after the store to m_out: no_alias is assumed (m_out may not be p's memory).
// kltrans: launch momentum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void momentum(const float* p, const float* m, const float* g, float* p_out,
                                    float* m_out, float lr, float beta, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    float mi = beta * m[i] + g[i];
    m_out[i] = mi;
    p_out[i] = p[i] - lr * mi;
  }
}
