// RUN: kltrans opt -p 'vectorize-access{width=4}' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The scale workload's kernel with float4 loads and stores. Alignment comes from the
// context (cudaMalloc gives 256-byte aligned buffers); the last n % 4 elements go
// through the emitted scalar tail, so any n is correct.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
