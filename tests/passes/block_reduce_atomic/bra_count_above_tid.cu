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
  if (tid < n && x[tid] > threshold) atomicAdd(count, 1u);
}
