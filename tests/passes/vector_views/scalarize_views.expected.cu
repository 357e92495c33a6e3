// RUN: kltrans opt -p 'scalarize-vectors' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: the alias, the dereference and the C-style cast come back as one spelling
// Vector views in three spellings are split into one access per component; the refused
// spellings stay as written.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const float4* in4 = reinterpret_cast<const float4*>(x);
  if (4 * t + 3 < n) {
    float4 v = make_float4(x[4 * t], x[4 * t + 1], x[4 * t + 2], x[4 * t + 3]);
    float4 w = make_float4(x[4 * t], x[4 * t + 1], x[4 * t + 2], x[4 * t + 3]);
    float4 r;
    r.x = a * v.x + b + 0.f * w.x;
    r.y = a * v.y + b + 0.f * w.y;
    r.z = a * v.z + b + 0.f * w.z;
    r.w = a * v.w + b + 0.f * w.w;
    y[4 * t] = r.x;
    y[4 * t + 1] = r.y;
    y[4 * t + 2] = r.z;
    y[4 * t + 3] = r.w;
    // ok: whole-vector: only one component is used
    float first = reinterpret_cast<const float4*>(x)[t].x;
    y[4 * t] = first * 0.f + r.x;
    // ok: plain-store: is not a statement
    float4 again = (reinterpret_cast<float4*>(y)[t] = r);
    y[4 * t + 1] = again.y;
  } else {
    for (int k = 4 * t; k < n; k++) {
      y[k] = a * x[k] + b;
    }
  }
}
