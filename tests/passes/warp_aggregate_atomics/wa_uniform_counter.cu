// RUN: kltrans opt -p 'warp-aggregate-atomics'
// Counting the positive elements into one global counter (a stream-compaction count):
// the address is the same for every lane, so the active lanes need no match, only
// __activemask() and __popc (no architecture requirement beyond sm_30). Named tid, index
// spelled threadIdx.x + blockDim.x * blockIdx.x.
// kltrans: launch count_positive grid=ceil_div(n, 256) block=256
extern "C" __global__ void count_positive(const float* __restrict__ x, int* __restrict__ count,
                                          int n) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n && x[tid] > 0.0f) atomicAdd(count, 1);
}
