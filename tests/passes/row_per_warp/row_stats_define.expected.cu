// RUN: kltrans opt -p 'row-per-warp'
// Integer row statistics, one thread per row: the block size is a #define, the index
// is spelled threadIdx.x + blockDim.x * blockIdx.x, the row body is a block under
// `if (row < rows)`, one loop reduces into two accumulators (+ and max, exact on
// integers: no reassociation fact needed) and the per-row results are written by lane 0.
#define BLOCK 128
// kltrans: launch row_stats grid=(ceil_div(rows, BLOCK) * 32) block=BLOCK
extern "C" __global__ void row_stats(const int* __restrict__ a, int* __restrict__ sums,
                                     int* __restrict__ peaks, int rows, int cols) {
  int row = (threadIdx.x + blockDim.x * blockIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (row < rows) {
    int total = 0;
    int peak = 0;
    for (int j = lane; j < cols; j += 32) {
      int v = a[row * cols + j];
      total += v;
      peak = max(peak, abs(v));
    }
    for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(0xffffffff, total, off);
    for (int off = 16; off > 0; off >>= 1) peak = max(peak, __shfl_xor_sync(0xffffffff, peak, off));
    if (lane == 0) sums[row] = total;
    if (lane == 0) peaks[row] = peak;
  }
}
