// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_80
// CHECK-SKIP: uniform-increment: the increment w[i] may differ between lanes
// Each lane adds its own weight: count * increment is not the sum of the increments.
// kltrans: launch wsum grid=ceil_div(n, 256) block=256
extern "C" __global__ void wsum(const int* __restrict__ key, const int* __restrict__ w,
                               int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[key[i]], w[i]);
}
