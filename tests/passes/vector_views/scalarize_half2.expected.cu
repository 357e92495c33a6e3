// RUN: kltrans opt -p 'scalarize-vectors' --assume 'aligned(*,16)'
// A __half2 view of a half array is two halves, rebuilt with __halves2half2; the store
// writes .x and .y.
#include <cuda_fp16.h>
__global__ void relu_pairs(const __half* in, __half* out, int pairs) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < pairs) {
    __half2 v = __halves2half2(in[2 * t], in[2 * t + 1]);
    __half2 r = __hmax2(v, __float2half2_rn(0.f));
    out[2 * t] = r.x;
    out[2 * t + 1] = r.y;
  }
}
