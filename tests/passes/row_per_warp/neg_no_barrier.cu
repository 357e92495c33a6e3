// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// CHECK-SKIP: no-barrier: __syncthreads
// A row kernel that stages a scale factor through shared memory behind a barrier: the
// barrier would have to interleave with the warp's shuffles, and the thread-per-row
// assumption (each thread on its own) no longer holds.
// kltrans: launch rowscale grid=ceil_div(rows, 256) block=256
extern "C" __global__ void rowscale(const float* __restrict__ x, float* __restrict__ y,
                                    const float* __restrict__ scale, int rows, int cols) {
  __shared__ float f;
  if (threadIdx.x == 0) f = scale[blockIdx.x];
  __syncthreads();
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    for (int j = 0; j < cols; ++j) y[row * cols + j] = x[row * cols + j] * f;
  }
}
