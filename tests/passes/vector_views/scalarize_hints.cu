// RUN: kltrans opt -p 'scalarize-vectors' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// A streaming load and store through cache-hint intrinsics keep their hint per element.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * t + 3 < n) {
    float4 v = __ldcs(reinterpret_cast<const float4*>(x) + t);
    v.x = a * v.x + b;
    v.y = a * v.y + b;
    v.z = a * v.z + b;
    v.w = a * v.w + b;
    __stcs(reinterpret_cast<float4*>(y) + t, v);
  } else {
    for (int k = 4 * t; k < n; k++) {
      y[k] = a * x[k] + b;
    }
  }
}
