// RUN: kltrans opt -p 'row-per-thread' --assume reassoc
// CHECK-SKIP: storage-check: starts at `bias[row]`, not 0
// The accumulator starts at the row's bias in every lane, so this warp kernel adds the
// bias 32 times; one thread per row would add it once: not the same computation.
// kltrans: launch rowsum_bias grid=(ceil_div(rows, 256) * 32) block=256
extern "C" __global__ void rowsum_bias(const float* __restrict__ x,
                                       const float* __restrict__ bias,
                                       float* __restrict__ out, int rows, int cols) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float s = bias[row];
  for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
  if (lane == 0) out[row] = s;
}
