// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,8)'
// CHECK-SKIP: vector-type: x points to __half but is accessed as float2
// A copy of halves moved as float2 (four halves per access): the lanes are not elements
// of x, so x2.x is not x[i].
// kltrans: launch copy_half grid=ceil_div(ceil_div(n, 4), 256) block=256
__global__ void copy_half(const __half* x, __half* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    const float2 x2 = reinterpret_cast<const float2*>(x)[i];
    float2 y2;
    y2.x = x2.x;
    y2.y = x2.y;
    reinterpret_cast<float2*>(y)[i] = y2;
  }
}
