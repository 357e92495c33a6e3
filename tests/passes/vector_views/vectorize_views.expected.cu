// RUN: kltrans opt -p 'vectorize-views' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// Four consecutive elements, loaded through make_float4 or stored from one float4's
// components in order, become one 16-byte access; the refused run stays as written.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * t + 3 < n) {
    const float4 v = reinterpret_cast<const float4*>(x)[t];
    float4 r;
    r.x = a * v.x + b;
    r.y = a * v.y + b;
    r.z = a * v.z + b;
    r.w = a * v.w + b;
    reinterpret_cast<float4*>(y)[t] = r;
    // ok: aligned: is not known to be a multiple of 2
    float2 u = make_float2(x[4 * t + 1], x[4 * t + 2]);
    y[4 * t] += 0.f * u.x;
  } else {
    for (int k = 4 * t; k < n; k++) {
      y[k] = a * x[k] + b;
    }
  }
}
