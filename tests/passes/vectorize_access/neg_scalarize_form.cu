// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: vector-form: v is loaded from x but stored to y
// Hand-written float4 code that reuses the vector loaded from x as the one stored to y:
// the lanes do not say which pointer each value belongs to, so there is no scalar body
// to read back.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
__global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    v.x = a * v.x + b;
    v.y = a * v.y + b;
    v.z = a * v.z + b;
    v.w = a * v.w + b;
    reinterpret_cast<float4*>(y)[i] = v;
  }
}
