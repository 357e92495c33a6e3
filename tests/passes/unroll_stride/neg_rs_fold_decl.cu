// RUN: kltrans opt -p 'reroll-stride{fold=true}'
// CHECK-SKIP: unrolled-shape: fold: the statement before the loop is not the declaration
// An unrolled grid-stride sum whose index is declared two statements before the main
// loop: fold=true would move the declaration over `float acc = 0.0f;`, so it refuses.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void reduce_sum(const float* __restrict__ x, float* out, int n) {
  size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (; gid + 3 * blockDim.x * gridDim.x < n; gid += 4 * blockDim.x * gridDim.x) {
      float v[4];
      for (int u = 0; u < 4; ++u) {
          v[u] = x[gid + u * blockDim.x * gridDim.x];
      }
      for (int u = 0; u < 4; ++u) {
          acc += v[u];
      }
  }
  for (; gid < n; gid += blockDim.x * gridDim.x) acc += x[gid];
  atomicAdd(out, acc);
}
