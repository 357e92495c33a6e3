// RUN: kltrans opt -p 'unroll-stride'
// GATE: corpus/reduce-sum
// The output of grid_stride/gs_sum_fold.cu: the index is declared in the loop header
// (for (size_t gid = ...; ...)). The pass hoists the declaration before the loop so the
// 4-way main loop can hand gid on to the remaining loop (gid is named nowhere else in
// the block); the inline load x[gid] goes into a register array.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void reduce_sum(const float* __restrict__ x, float* out, int n) {
  float sum = 0.0f;
  size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; gid + 3 * blockDim.x * gridDim.x < n; gid += 4 * blockDim.x * gridDim.x) {
      float v[4];
      for (int u = 0; u < 4; ++u) {
          v[u] = x[gid + u * blockDim.x * gridDim.x];
      }
      for (int u = 0; u < 4; ++u) {
          sum += v[u];
      }
  }
  for (; gid < n; gid += blockDim.x * gridDim.x) sum += x[gid];
  atomicAdd(out, sum);
}
