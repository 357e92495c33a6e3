// RUN: kltrans opt -p 'scalarize-stream'
// CHECK-SKIP: vector-form: the then-branch is not the vector form of the else-branch's loop
// A hand-edited vector path: the fourth lane computes something else than the fallback
// loop's body, so it is not the vector form of the loop and stays.
// kltrans: launch silu grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void silu(const float* x, float* y, int n) {
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0;
  if (vec_ok) {
    const float4* x_vec = reinterpret_cast<const float4*>(x);
    float4* y_vec = reinterpret_cast<float4*>(y);
    const int nv = n >> 2;
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    for (; i < nv; i += (blockDim.x * gridDim.x)) {
      const float4 x4 = x_vec[i];
      float4 y4;
      {
        float v = x4.x;
        y4.x = v / (1.0f + expf(-v));
      }
      {
        float v = x4.y;
        y4.y = v / (1.0f + expf(-v));
      }
      {
        float v = x4.z;
        y4.z = v / (1.0f + expf(-v));
      }
      {
        float v = x4.w;
        y4.w = v;
      }
      y_vec[i] = y4;
    }
  } else {
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
      float v = x[i];
      y[i] = v / (1.0f + expf(-v));
    }
  }
}
