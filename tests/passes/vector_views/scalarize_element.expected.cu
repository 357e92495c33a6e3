// RUN: kltrans opt -p 'scalarize-vectors' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// A float4 stored as element 0 of a view of &y[j]: four stores from j on.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * t + 3 < n) {
    float4 r;
    r.x = a * x[4 * t] + b;
    r.y = a * x[4 * t + 1] + b;
    r.z = a * x[4 * t + 2] + b;
    r.w = a * x[4 * t + 3] + b;
    y[4 * t] = r.x;
    y[4 * t + 1] = r.y;
    y[4 * t + 2] = r.z;
    y[4 * t + 3] = r.w;
  } else {
    for (int k = 4 * t; k < n; k++) {
      y[k] = a * x[k] + b;
    }
  }
}
