// RUN: kltrans opt -p 'coalesce-remap'
// GATE: tests/data/workloads/scale
// Chunk size from a #define, the global index written out inline (no variable),
// `#pragma unroll`, `c++`, a braced guard and a local for the loaded value.
#define CHUNK 8
// kltrans: launch scale grid=ceil_div(n, 2048) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
#pragma unroll
  for (int c = 0; c < CHUNK; c++) {
    const int idx = (blockIdx.x * blockDim.x) * CHUNK + c * blockDim.x + threadIdx.x;
    if (idx < n) {
      const float v = x[idx];
      y[idx] = a * v + b;
    }
  }
}
