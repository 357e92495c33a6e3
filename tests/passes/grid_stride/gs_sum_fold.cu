// RUN: kltrans opt -p 'grid-stride'
// GATE: corpus/reduce-sum
// A sum with one atomicAdd per thread (size_t gid, (size_t) cast on blockIdx.x): the
// guard folds into a grid-stride loop header; unroll_stride/us_sum_after_grid_stride.cu
// continues from this output.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* __restrict__ x, float* out, int n) {
  float sum = 0.0f;
  size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (gid < n) sum += x[gid];
  atomicAdd(out, sum);
}
