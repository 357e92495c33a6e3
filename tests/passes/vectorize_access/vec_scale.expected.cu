// RUN: kltrans opt -p 'vectorize-access{width=4}' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The scale workload's kernel with float4 loads and stores. Alignment comes from the
// context (cudaMalloc gives 256-byte aligned buffers); the last n % 4 elements go
// through the emitted scalar tail, so any n is correct.
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
