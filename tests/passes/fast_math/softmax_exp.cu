// RUN: kltrans opt -p 'fast-math{ops=exp}' --assume 'tolerance(1e-4)'
// One block per row: expf becomes __expf. A relative tolerance of 1e-4 covers __expf's
// 2 + floor(1.173|x|) ulp over the whole finite range (|x| <= 88.72 needs 1.3e-5).
// The division by the row sum is left alone: only ops=exp was asked for.
extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y,
                                        int rows, int cols) {
  const int row = blockIdx.x;
  const int tid = threadIdx.x;
  if (row >= rows) return;
  const float* in = x + row * cols;
  float* out = y + row * cols;
  float m = -INFINITY;
  for (int c = tid; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  float sum = 0.0f;
  for (int c = tid; c < cols; c += blockDim.x) {
    float e = expf(in[c] - m);
    out[c] = e;
    sum += e;
  }
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  for (int c = tid; c < cols; c += blockDim.x) out[c] = out[c] / sum;
}
