// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_60
// CHECK-SKIP: arch: sm_60 is older than sm_70
// Pascal has no __match_any_sync: the per-address grouping needs sm_70.
// kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
extern "C" __global__ void histogram_naive(const unsigned char* data, unsigned int* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i]], 1u);
}
