// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: whole-warps: is not a multiple of 32
// 200 threads per block: the last warp of each block holds 8 threads, and with the grid
// times 32 a warp would straddle two blocks, so `row` would not be warp-uniform.
// kltrans: launch rowsum grid=ceil_div(rows, 200) block=200
extern "C" __global__ void rowsum(const float* __restrict__ x, float* __restrict__ out,
                                  int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += x[row * cols + j];
  out[row] = s;
}
