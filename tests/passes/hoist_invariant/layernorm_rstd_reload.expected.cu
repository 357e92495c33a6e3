// RUN: kltrans opt -p 'hoist-invariant' --assume 'cols>=1'
// GATE: corpus/layernorm
// One thread per row; the statistics are written to mean/rstd first and rstd[row] is
// re-read in every iteration of the output loop. The loop stores only bf16 elements
// (2 bytes, through out), which cannot overlap the float rstd[row], so the load moves
// above the loop; cols >= 1 makes loading it before the loop safe.
// kltrans: launch layernorm_rows grid=ceil_div(rows, 256) block=256
#include <cuda_bf16.h>

extern "C" __global__ void layernorm_rows(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                          const __nv_bfloat16* bias, __nv_bfloat16* y,
                                          float* mean, float* rstd, int rows, int cols,
                                          float eps) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* in = x + (size_t)row * cols;
  __nv_bfloat16* out = y + (size_t)row * cols;

  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += __bfloat162float(in[c]);
  float mu = sum / (float)cols;
  mean[row] = mu;

  float var = 0.0f;
  for (int c = 0; c < cols; ++c) {
    float d = __bfloat162float(in[c]) - mu;
    var += d * d;
  }
  rstd[row] = 1.0f / sqrtf(var / (float)cols + eps);

  const float rstd_row = rstd[row];
  for (int c = 0; c < cols; ++c) {
    float v = (__bfloat162float(in[c]) - mu) * rstd_row;
    out[c] = __float2bfloat16(v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
  }
}
