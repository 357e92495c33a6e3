// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_axpby
// One store reading two inputs (x[i] and y[i]): both are loaded once as float4, the
// statement runs per lane (no locals, so no blocks). Index blockIdx.x * blockDim.x +
// threadIdx.x, stride blockDim.x * gridDim.x.
// kltrans: launch axpby grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void axpby(const float* x, const float* y, float* z, float a, float b, int n) {
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0 && reinterpret_cast<size_t>(z) % 16 == 0;
  if (vec_ok) {
    const float4* x_vec = reinterpret_cast<const float4*>(x);
    const float4* y_vec = reinterpret_cast<const float4*>(y);
    float4* z_vec = reinterpret_cast<float4*>(z);
    const int nv = n >> 2;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < nv; i += (blockDim.x * gridDim.x)) {
      const float4 x4 = x_vec[i];
      const float4 y4 = y_vec[i];
      float4 z4;
      z4.x = a * x4.x + b * y4.x;
      z4.y = a * x4.y + b * y4.y;
      z4.z = a * x4.z + b * y4.z;
      z4.w = a * x4.w + b * y4.w;
      z_vec[i] = z4;
    }
  } else {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
      z[i] = a * x[i] + b * y[i];
  }
}
