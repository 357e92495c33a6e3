// RUN: kltrans opt -p 'hoist-invariant'
// The column scale is loaded once per thread instead of 16 times; the declaration goes
// above the unroll pragma, which stays attached to its loop.
__global__ void scale_cols(const float* __restrict__ in, float* __restrict__ out,
                           const float* __restrict__ colscale, int cols) {
  int tid = threadIdx.x;
  int col = blockIdx.x * blockDim.x + tid;
  if (col >= cols) return;
  const float colscale_col = colscale[col];
  #pragma unroll 4
  for (int r = 0; r < 16; ++r)
    out[r * cols + col] = in[r * cols + col] * colscale_col;
}
