// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_80
// CHECK-SKIP: integer-add: sums holds float
// A float scatter-add: adding count * value once rounds differently from adding value
// count times, so the aggregation is not exact.
// kltrans: launch scatter grid=ceil_div(n, 256) block=256
extern "C" __global__ void scatter(const int* __restrict__ idx, float* __restrict__ sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&sums[idx[i]], 0.5f);
}
