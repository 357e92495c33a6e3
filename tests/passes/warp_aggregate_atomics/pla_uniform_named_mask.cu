// RUN: kltrans opt -p 'per-lane-atomics'
// A hand-written aggregation of a uniform counter with its own mask name and a scalar
// increment: each lane adds `step` itself again (inverse_for keeps the name active).
// kltrans: launch tally grid=ceil_div(n, 128) block=128
extern "C" __global__ void tally(const int* __restrict__ flags, unsigned int* __restrict__ total,
                                 unsigned int step, int n) {
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid < n && flags[gid] != 0) {
    const unsigned active = __activemask();
    if ((threadIdx.x & 31) == __ffs(active) - 1) atomicAdd(total, step * __popc(active));
  }
}
