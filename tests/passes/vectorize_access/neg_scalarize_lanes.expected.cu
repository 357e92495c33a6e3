// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: lanes-agree: lane .y
// Complex conjugate of interleaved (re, im) pairs: the odd lanes negate, the even ones
// copy. The lanes compute different things, so no one scalar body stands for them.
// kltrans: launch conj grid=ceil_div(ceil_div(n, 4), 256) block=256
__global__ void conj(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    const float4 x4 = reinterpret_cast<const float4*>(x)[i];
    float4 y4;
    y4.x = x4.x;
    y4.y = -x4.y;
    y4.z = x4.z;
    y4.w = -x4.w;
    reinterpret_cast<float4*>(y)[i] = y4;
  }
}
