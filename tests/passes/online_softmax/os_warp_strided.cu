// RUN: kltrans opt -p 'online-softmax' --assume reassoc
// GATE: corpus/softmax
// One warp per row, lanes strided over the columns: each lane's (max, sum) pair over its
// own columns is fused into one pass, then the pairs are merged across the warp with
// rescaling. fmaxf with the element first and a WARPS macro for the block shape.
#define WARPS 8
// kltrans: launch softmax_warp grid=ceil_div(rows, 8) block=256
extern "C" __global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ y,
                                        int rows, int cols) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float* yr = y + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) {
    m = fmaxf(xr[c], m);
  }
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    s += expf(xr[c] - m);
  }
  for (int off = 16; off > 0; off >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, off);
    const float os = __shfl_xor_sync(0xffffffffu, s, off);
    const float nm = fmaxf(m, om);
    s = (s == 0.0f ? 0.0f : s * expf(m - nm)) + (os == 0.0f ? 0.0f : os * expf(om - nm));
    m = nm;
  }
  for (int c = lane; c < cols; c += 32) {
    yr[c] = expf(xr[c] - m) / s;
  }
}
