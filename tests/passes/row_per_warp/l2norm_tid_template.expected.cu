// RUN: kltrans opt -p 'row-per-warp' --assume reassoc --assume 'BLOCK%32==0'
// Row-wise L2 normalisation in a templated kernel: a named `tid` for the row, an early
// exit without braces, `k += 1` steps, the sum written as ss = ss + v * v. The block
// size is a template parameter: whole warps come from --assume 'BLOCK%32==0'.
// kltrans: launch l2_normalize grid=(ceil_div(rows, BLOCK) * 32) block=BLOCK
template <int BLOCK>
__global__ void l2_normalize(const float* __restrict__ in, float* __restrict__ out,
                             int rows, int cols, float eps) {
  const int tid = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (tid >= rows) return;
  float ss = 0.0f;
  for (int k = lane; k < cols; k += 32) {
    const float v = in[tid * cols + k];
    ss = ss + v * v;
  }
  for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, off);
  const float inv = rsqrtf(ss + eps);
  for (int k = lane; k < cols; k += 32) out[tid * cols + k] = in[tid * cols + k] * inv;
}

template __global__ void l2_normalize<256>(const float* __restrict__, float* __restrict__, int,
                                           int, float);
