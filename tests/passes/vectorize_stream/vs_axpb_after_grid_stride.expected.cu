// RUN: kltrans opt -p 'vectorize-stream{flag=aligned16,unroll=4,div=div,restrict=true}' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// The output of grid_stride/gs_axpb_size_t_stride.cu: a 64-bit idx declared before the
// loop and a named stride blockDim.x * gridDim.x; a flag named aligned16 is declared,
// four vectors in flight, __restrict__ vector views (no_alias from the context).
// kltrans: launch scale grid=min(ceil_div(n, 256), 264) block=256
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y,
                                 float alpha, float beta, int n) {
  size_t idx = (size_t)blockDim.x * blockIdx.x + threadIdx.x;
  const size_t step = blockDim.x * gridDim.x;
  const bool aligned16 = n % 4 == 0 && reinterpret_cast<size_t>(x) % 16 == 0 && reinterpret_cast<size_t>(y) % 16 == 0;
  if (aligned16) {
    const float4* __restrict__ xv = reinterpret_cast<const float4*>(x);
    float4* __restrict__ yv = reinterpret_cast<float4*>(y);
    const size_t nv = n / 4;
    for (; idx + (4 - 1) * step < nv; idx += 4 * step) {
      float4 t[4];
      for (int u = 0; u < 4; ++u) {
        t[u] = xv[idx + u * step];
      }
      for (int u = 0; u < 4; ++u) {
        float4 o;
        o.x = fmaf(alpha, t[u].x, beta);
        o.y = fmaf(alpha, t[u].y, beta);
        o.z = fmaf(alpha, t[u].z, beta);
        o.w = fmaf(alpha, t[u].w, beta);
        yv[idx + u * step] = o;
      }
    }
    for (; idx < nv; idx += step) {
      const float4 t = xv[idx];
      float4 o;
      o.x = fmaf(alpha, t.x, beta);
      o.y = fmaf(alpha, t.y, beta);
      o.z = fmaf(alpha, t.z, beta);
      o.w = fmaf(alpha, t.w, beta);
      yv[idx] = o;
    }
  } else {
    for (; idx < n; idx += step) y[idx] = fmaf(alpha, x[idx], beta);
  }
}
