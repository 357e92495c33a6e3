// RUN: kltrans opt -p 'row-per-warp'
// Integer row statistics, one thread per row: the block size is a #define, the index
// is spelled threadIdx.x + blockDim.x * blockIdx.x, the row body is a block under
// `if (row < rows)`, one loop reduces into two accumulators (+ and max, exact on
// integers: no reassociation fact needed) and the per-row results are written by lane 0.
#define BLOCK 128
// kltrans: launch row_stats grid=ceil_div(rows, BLOCK) block=BLOCK
extern "C" __global__ void row_stats(const int* __restrict__ a, int* __restrict__ sums,
                                     int* __restrict__ peaks, int rows, int cols) {
  int row = threadIdx.x + blockDim.x * blockIdx.x;
  if (row < rows) {
    int total = 0;
    int peak = 0;
    for (int j = 0; j < cols; j++) {
      int v = a[row * cols + j];
      total += v;
      peak = max(peak, abs(v));
    }
    sums[row] = total;
    peaks[row] = peak;
  }
}
