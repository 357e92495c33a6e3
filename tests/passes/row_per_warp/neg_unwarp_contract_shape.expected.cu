// RUN: kltrans opt -p 'row-per-thread' --assume reassoc
// CHECK-SKIP: contract-shape: is not G * 32
// The launch header gives the grid as ceil_div(rows, 8) (8 warps of a 256-thread
// block): the pass only restores a grid written G * 32.
// kltrans: launch rowsum grid=ceil_div(rows, 8) block=256
extern "C" __global__ void rowsum(const float* __restrict__ x, float* __restrict__ out,
                                  int rows, int cols) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
  if (lane == 0) out[row] = s;
}
