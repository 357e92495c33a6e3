// RUN: kltrans opt -p 'row-per-warp'
// CHECK-SKIP: reduction-ops: pass --assume reassoc
// A float row sum: 32 partial sums added by a butterfly round differently from one
// sequential sum. Without --assume reassoc the pass does not decide that for the user.
// kltrans: launch rowsum grid=ceil_div(rows, 256) block=256
extern "C" __global__ void rowsum(const float* __restrict__ x, float* __restrict__ out,
                                  int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += x[row * cols + j];
  out[row] = s;
}
