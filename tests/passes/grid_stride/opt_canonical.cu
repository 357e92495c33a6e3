// RUN: kltrans opt -p 'one-per-thread'
// An expert grid-stride kernel on a capped grid: the loop becomes one element per thread
// and the grid is uncapped (min(G, 4096) -> G).
// kltrans: launch fill grid=min(ceil_div(n, 256), 4096) block=256
__global__ void fill(float* __restrict__ out, float value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = value;
  }
}
