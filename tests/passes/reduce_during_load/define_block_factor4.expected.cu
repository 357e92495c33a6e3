// RUN: kltrans opt -p 'reduce-during-load{factor=4}' --assume reassoc
// GATE: corpus/reduce-sum
// A #define'd block, the index written threadIdx.x + BLOCK * blockIdx.x, a while-loop
// tree: four elements per thread during the load, the grid divided by four.
#define BLOCK 128
// kltrans: launch block_sum grid=ceil_div(n, 4 * 128) block=128
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float partial[BLOCK];
  int gid = threadIdx.x + (BLOCK * 4) * blockIdx.x;
  float sum = gid < n ? x[gid] : 0.0f;
  if (gid + BLOCK < n) sum += x[gid + BLOCK];
  if (gid + 2 * BLOCK < n) sum += x[gid + 2 * BLOCK];
  if (gid + 3 * BLOCK < n) sum += x[gid + 3 * BLOCK];
  partial[threadIdx.x] = sum;
  __syncthreads();
  unsigned int s = BLOCK / 2;
  while (s > 0) {
    if (threadIdx.x < s) {
      partial[threadIdx.x] = partial[threadIdx.x] + partial[threadIdx.x + s];
    }
    __syncthreads();
    s /= 2;
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
