// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: covering-grid: grid=528: it is neither ceil_div(n, d) nor (n + d - 1) / d
// The grid is a fixed 528 blocks (4 per SM of a 132-SM GPU): nothing says which grid
// would give every element its own thread.
// kltrans: launch fill grid=528 block=256
__global__ void fill(float* out, float value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = value;
}
