// RUN: kltrans opt -p 'row-per-thread' --assume reassoc
// CHECK-SKIP: warp-row-index: the lane lane is used at line
// The lane also picks a column outside the loops (each lane keeps its own x[row, lane]):
// with one thread per row there is no lane to give it.
// kltrans: launch rowsum_first grid=(ceil_div(rows, 256) * 32) block=256
extern "C" __global__ void rowsum_first(const float* __restrict__ x, float* __restrict__ out,
                                        int rows, int cols) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float s = 0.0f;
  for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
  const float mine = x[row * cols + lane];
  for (int j = lane; j < cols; j += 32) out[row * cols + j] = mine / s;
}
