// RUN: kltrans opt -p 'vectorize-views' --assume 'aligned(*,16)'
// CHECK-SKIP: component-type: would reinterpret its bytes
// make_float4 of four halves converts each to float: a float4 view of the half array
// would read eight halves' bytes as four floats.
#include <cuda_fp16.h>
__global__ void widen(const __half* h, float4* out, int n4) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n4) out[t] = make_float4(h[4 * t], h[4 * t + 1], h[4 * t + 2], h[4 * t + 3]);
}
