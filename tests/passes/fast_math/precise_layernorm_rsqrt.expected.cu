// RUN: kltrans opt -p 'precise-math' --assume 'tolerance(1e-4)'
// GATE: corpus/layernorm
// One thread per row; rsqrtf(var + eps) goes back to 1.0f / sqrtf(var + eps). The mean
// and the scaled variance are plain divisions: precise-math touches intrinsics only.
// kltrans: launch layernorm_fwd grid=ceil_div(rows, 128) block=128
#include <cuda_bf16.h>

extern "C" __global__ void layernorm_fwd(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                         const __nv_bfloat16* bias, __nv_bfloat16* y,
                                         float* mean, float* rstd, int rows, int cols,
                                         float eps) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    const __nv_bfloat16* in = x + (size_t)row * cols;
    __nv_bfloat16* out = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += __bfloat162float(in[c]);
    const float mu = s / cols;
    float ss = 0.0f;
    for (int c = 0; c < cols; ++c) {
      const float d = __bfloat162float(in[c]) - mu;
      ss += d * d;
    }
    const float rs = 1.0f / sqrtf(ss / cols + eps);
    for (int c = 0; c < cols; ++c) {
      const float v = (__bfloat162float(in[c]) - mu) * rs;
      out[c] = __float2bfloat16(v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
    }
    mean[row] = mu;
    rstd[row] = rs;
  }
}
