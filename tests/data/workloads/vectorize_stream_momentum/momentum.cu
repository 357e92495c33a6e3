// kltrans: launch momentum grid=ceil_div(n, 256) block=256
extern "C" __global__ void momentum(const float* p, const float* m, const float* g, float* p_out,
                                    float* m_out, float lr, float beta, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float mi = beta * m[i] + g[i];
    m_out[i] = mi;
    p_out[i] = p[i] - lr * mi;
  }
}
