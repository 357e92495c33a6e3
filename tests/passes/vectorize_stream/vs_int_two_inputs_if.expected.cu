// RUN: kltrans opt -p 'vectorize-stream'
// The int4 path: two int inputs, a local fixed up by an if statement, an integer max in
// the store (no int test workload: the CPU gate covers the float bodies).
// kltrans: launch abs_prod grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void abs_prod(const int* x, const int* w, int* y, int n) {
  const bool vec_ok = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(w) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0;
  if (vec_ok) {
    const int4* x_vec = reinterpret_cast<const int4*>(x);
    const int4* w_vec = reinterpret_cast<const int4*>(w);
    int4* y_vec = reinterpret_cast<int4*>(y);
    const int nv = n >> 2;
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    for (; i < nv; i += (blockDim.x * gridDim.x)) {
      const int4 x4 = x_vec[i];
      const int4 w4 = w_vec[i];
      int4 y4;
      {
        int v = x4.x * w4.x;
        if (v < 0) v = -v;
        y4.x = max(v, 3);
      }
      {
        int v = x4.y * w4.y;
        if (v < 0) v = -v;
        y4.y = max(v, 3);
      }
      {
        int v = x4.z * w4.z;
        if (v < 0) v = -v;
        y4.z = max(v, 3);
      }
      {
        int v = x4.w * w4.w;
        if (v < 0) v = -v;
        y4.w = max(v, 3);
      }
      y_vec[i] = y4;
    }
  } else {
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
      int v = x[i] * w[i];
      if (v < 0) v = -v;
      y[i] = max(v, 3);
    }
  }
}
