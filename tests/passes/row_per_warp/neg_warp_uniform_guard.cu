// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: warp-uniform-guard: it must be a statement of rowsum's body
// The row guard sits inside another branch: the pass only rewrites a guard that is a
// statement of the kernel body, where nothing else can split the warp before the
// shuffles.
// kltrans: launch rowsum grid=ceil_div(rows, 256) block=256
extern "C" __global__ void rowsum(const float* __restrict__ x, float* __restrict__ out,
                                  int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (cols > 0) {
    if (row < rows) {
      float s = 0.0f;
      for (int j = 0; j < cols; ++j) s += x[row * cols + j];
      out[row] = s;
    }
  }
}
