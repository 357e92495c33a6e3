// RUN: kltrans opt -p 'row-per-warp{lane=cols}' --assume reassoc
// CHECK-SKIP: fresh-names: the lane name cols is already used
// The lane name asked for is already a parameter of the kernel.
// kltrans: launch rowsum grid=ceil_div(rows, 256) block=256
extern "C" __global__ void rowsum(const float* __restrict__ x, float* __restrict__ out,
                                  int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += x[row * cols + j];
  out[row] = s;
}
