// RUN: kltrans opt -p 'row-per-thread{incr=post}' --assume reassoc
// A hand-written warp-per-row kernel (lane `ln`, butterfly offset `o`, the row body a
// block under `if (r < n_rows)`, fmaxf and + butterflies, lane-0 statistics): back to
// one thread per row with `j++` loops.
// kltrans: launch row_max_sum grid=ceil_div(n_rows, 128) block=128
extern "C" __global__ void row_max_sum(const float* __restrict__ src, float* __restrict__ mx,
                                       float* __restrict__ sm, int n_rows, int n_cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n_rows) {
    float best = -INFINITY;
    float acc = 0.0f;
    for (int j = 0; j < n_cols; j++) {
      const float v = src[r * n_cols + j];
      best = fmaxf(best, v);
      acc += v;
    }
    mx[r] = best;
    sm[r] = acc;
  }
}
