// RUN: kltrans opt -p 'per-lane-atomics' --arch sm_80
// CHECK-SKIP: aggregated-form: the atomic's address is not indexed by the matched key v
// Lanes are grouped by v but the leader adds into bins[v / 2]: lanes with v = 2 and 3
// form two groups that add to one bin; that is not the form warp-aggregate-atomics
// writes, so it is not known to be one lane-wise atomic.
// kltrans: launch half_hist grid=ceil_div(n, 256) block=256
extern "C" __global__ void half_hist(const unsigned char* data, unsigned int* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned int v = data[i];
    {
      const unsigned peers = __match_any_sync(__activemask(), v);
      if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&bins[v / 2], __popc(peers));
    }
  }
}
