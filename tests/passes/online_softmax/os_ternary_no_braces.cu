// RUN: kltrans opt -p 'online-softmax' --assume reassoc
// GATE: corpus/softmax
// Thread per row with a named gid (threadIdx.x + blockDim.x * blockIdx.x), the max as a
// conditional, loops without braces, `s = s + __expf(...)`, and both statistics declared
// in one statement before the loops (nothing between them: between=0 for the inverse).
// kltrans: launch softmax_rows grid=ceil_div(rows, 128) block=128
extern "C" __global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
  const int gid = threadIdx.x + blockDim.x * blockIdx.x;
  if (gid >= rows) return;
  const float* xr = x + (size_t)gid * cols;
  float m = -INFINITY, s = 0.0f;
  for (int c = 0; c < cols; c++)
    m = xr[c] > m ? xr[c] : m;
  for (int c = 0; c < cols; c++)
    s = s + __expf(xr[c] - m);
  const float inv = 1.0f / s;
  for (int c = 0; c < cols; c++) y[(size_t)gid * cols + c] = __expf(xr[c] - m) * inv;
}
