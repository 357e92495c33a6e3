// RUN: kltrans opt -p 'block-reduce-atomic{shuffle=down}'
// Counting elements above a threshold, the index written threadIdx.x first and named
// tid, the block size a #define, the guard an unbraced `if` with a compound condition.
// Integer counts are exact in any order: no assumption needed.
#define BLOCK 128
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// kltrans: launch count_above grid=CEIL_DIV(n, BLOCK) block=BLOCK
extern "C" __global__ void count_above(const float* __restrict__ x, unsigned int* count,
                                       float threshold, int n) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  {
    unsigned int val = (tid < n && x[tid] > threshold) ? 1u : 0u;
    __shared__ unsigned int warp_part[32];
    for (int off = 16; off > 0; off >>= 1) {
      val += __shfl_down_sync(0xffffffffu, val, off);
    }
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
      warp_part[warp] = val;
    }
    __syncthreads();
    if (warp == 0) {
      val = lane < (blockDim.x >> 5) ? warp_part[lane] : 0u;
      for (int off = 16; off > 0; off >>= 1) {
        val += __shfl_down_sync(0xffffffffu, val, off);
      }
      if (lane == 0) {
        atomicAdd(count, val);
      }
    }
  }
}
