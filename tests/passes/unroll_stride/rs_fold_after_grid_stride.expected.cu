// RUN: kltrans opt -p 'reroll-stride{fold=true}'
// GATE: corpus/reduce-sum
// The shape unroll-stride writes on a folded grid-stride loop (us_sum_after_grid_stride.cu):
// the main loop goes and fold=true moves the hoisted declaration of gid back into the
// remaining loop's header.
// kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void reduce_sum(const float* __restrict__ x, float* out, int n) {
  float sum = 0.0f;
  for (size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x; gid < n; gid += blockDim.x * gridDim.x) sum += x[gid];
  atomicAdd(out, sum);
}
