// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The float4 scale kernel (scale's signature) back to one element per thread: the .x
// lane, with x4.x read as x[i], is the scalar body; the grid is multiplied back. The
// alignment fact is the one the vector version relied on (the round trip needs it).
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    const float4 x4 = reinterpret_cast<const float4*>(x)[i];
    float4 y4;
    y4.x = a * x4.x + b;
    y4.y = a * x4.y + b;
    y4.z = a * x4.z + b;
    y4.w = a * x4.w + b;
    reinterpret_cast<float4*>(y)[i] = y4;
  } else {
    for (int k = 4 * i; k < n; ++k) y[k] = a * x[k] + b;
  }
}
