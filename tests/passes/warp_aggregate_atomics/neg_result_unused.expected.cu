// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_80
// CHECK-SKIP: result-unused: is used: only the leader's atomic would return an old value
// Stream compaction: each lane needs its own slot (the old counter value); the
// aggregated form returns one value per group (rebuilding each lane's slot with a
// prefix popcount is not implemented).
// kltrans: launch compact grid=ceil_div(n, 256) block=256
extern "C" __global__ void compact(const float* __restrict__ x, float* __restrict__ out,
                                  int* __restrict__ count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) {
    const int slot = atomicAdd(count, 1);
    out[slot] = x[i];
  }
}
