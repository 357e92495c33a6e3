// RUN: kltrans opt -p 'vectorize-stream'
// GATE: tests/data/workloads/vectorize_stream_axpby
// The index declared before the loop (grid-stride's unfolded form), one declaration of two
// temporaries from the two inputs; the pass writes the flag over x, y and z.
// kltrans: launch axpby grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void axpby(const float* x, const float* y, float* z, float a, float b, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int nthreads = gridDim.x * blockDim.x;
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0 && reinterpret_cast<size_t>(z) % 16 == 0;
  if (vec_ok) {
    const float4* x_vec = reinterpret_cast<const float4*>(x);
    const float4* y_vec = reinterpret_cast<const float4*>(y);
    float4* z_vec = reinterpret_cast<float4*>(z);
    const int nv = n >> 2;
    for (; k < nv; k += nthreads) {
      const float4 x4 = x_vec[k];
      const float4 y4 = y_vec[k];
      float4 z4;
      {
        float xk = x4.x, yk = y4.x;
        z4.x = a * xk + b * yk;
      }
      {
        float xk = x4.y, yk = y4.y;
        z4.y = a * xk + b * yk;
      }
      {
        float xk = x4.z, yk = y4.z;
        z4.z = a * xk + b * yk;
      }
      {
        float xk = x4.w, yk = y4.w;
        z4.w = a * xk + b * yk;
      }
      z_vec[k] = z4;
    }
  } else {
    for (; k < n; k += nthreads) {
      float xk = x[k], yk = y[k];
      z[k] = a * xk + b * yk;
    }
  }
}
