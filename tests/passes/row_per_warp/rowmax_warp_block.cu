// RUN: kltrans opt -p 'row-per-thread{incr=post}' --assume reassoc
// A hand-written warp-per-row kernel (lane `ln`, butterfly offset `o`, the row body a
// block under `if (r < n_rows)`, fmaxf and + butterflies, lane-0 statistics): back to
// one thread per row with `j++` loops.
// kltrans: launch row_max_sum grid=(ceil_div(n_rows, 128) * 32) block=128
extern "C" __global__ void row_max_sum(const float* __restrict__ src, float* __restrict__ mx,
                                       float* __restrict__ sm, int n_rows, int n_cols) {
  int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int ln = threadIdx.x & 31;
  if (r < n_rows) {
    float best = -INFINITY;
    float acc = 0.0f;
    for (int j = ln; j < n_cols; j += 32) {
      const float v = src[r * n_cols + j];
      best = fmaxf(best, v);
      acc += v;
    }
    for (int o = 16; o > 0; o >>= 1) best = fmaxf(best, __shfl_xor_sync(0xffffffff, best, o));
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (ln == 0) mx[r] = best;
    if (ln == 0) sm[r] = acc;
  }
}
