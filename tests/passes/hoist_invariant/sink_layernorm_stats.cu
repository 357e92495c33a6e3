// RUN: kltrans opt -p 'sink-invariant' --assume 'cols>=1'
// GATE: corpus/layernorm
// The hoisted shape: rstd_row follows the hoist-invariant naming scheme, so the load
// goes back into the normalisation loop. The loop's stores are bf16 (2 bytes, through a
// __restrict__ pointer) and cannot change the float rstd[row].
// kltrans: launch layernorm_rows grid=ceil_div(rows, 256) block=256
#include <cuda_bf16.h>

extern "C" __global__ void layernorm_rows(const __nv_bfloat16* __restrict__ x,
                                          const __nv_bfloat16* __restrict__ weight,
                                          const __nv_bfloat16* __restrict__ bias,
                                          __nv_bfloat16* __restrict__ y, float* mean,
                                          float* rstd, int rows, int cols, float eps) {
  const int row = threadIdx.x + blockIdx.x * blockDim.x;
  if (row < rows) {
    const __nv_bfloat16* xr = x + (size_t)row * cols;
    __nv_bfloat16* yr = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += __bfloat162float(xr[c]);
    const float m = s / cols;
    float ss = 0.0f;
    for (int c = 0; c < cols; ++c) {
      const float d = __bfloat162float(xr[c]) - m;
      ss += d * d;
    }
    mean[row] = m;
    rstd[row] = rsqrtf(ss / cols + eps);
    const float rstd_row = rstd[row];
    for (int c = 0; c < cols; ++c) {
      const float v = (__bfloat162float(xr[c]) - m) * rstd_row;
      yr[c] = __float2bfloat16(v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
    }
  }
}
