// RUN: kltrans opt -p 'scalarize-vectors' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// A float4 read through a vector pointer variable: the components are read from the array
// it views, and the inverse reads through the same variable again (via=in4).
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const float* row = x;
  const float4* in4 = reinterpret_cast<const float4*>(row);
  if (4 * t + 3 < n) {
    float4 v = in4[t];
    y[4 * t] = a * v.x + b;
    y[4 * t + 1] = a * v.y + b;
    y[4 * t + 2] = a * v.z + b;
    y[4 * t + 3] = a * v.w + b;
  } else {
    for (int k = 4 * t; k < n; k++) {
      y[k] = a * x[k] + b;
    }
  }
}
