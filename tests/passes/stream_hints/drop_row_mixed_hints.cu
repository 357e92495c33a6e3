// RUN: kltrans opt -p 'drop-stream-hints'
// A layernorm-style row kernel with a different hint per array, spelled pointer +
// offset: the row of x streams (__ldcs), the weights stay cached (__ldg), the row of y
// is a streaming store; the float4 path dereferences a cast pointer. inverse_for
// restores each array's own hint (arrays=w:ldg+xr+yr with load=ldcs, store=stcs).
// kltrans: launch row_scale grid=rows block=256
extern "C" __global__ void row_scale(const float* __restrict__ x, const float* __restrict__ w,
                                     float* __restrict__ y, int rows, int cols) {
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;
  const int c4 = cols / 4;
  for (int c = threadIdx.x; c < c4; c += blockDim.x) {
    float4 v = __ldcs(reinterpret_cast<const float4*>(xr) + c);
    v.x *= v.y;
    __stcs(reinterpret_cast<float4*>(yr) + c, v);
  }
  for (int c = 4 * c4 + threadIdx.x; c < cols; c += blockDim.x) {
    __stcs(yr + c, __ldcs(xr + c) * __ldg(w + c));
  }
}
