// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,8)' --assume 'n%2==0'
// A float2 kernel with no tail (valid for even n, the fact it relied on): scalarized, it
// is valid for every n. The grid is divided by 2 around the whole expression.
// kltrans: launch mul grid=ceil_div((n+255)/256, 2) block=256
__global__ void mul(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    const float2 a2 = reinterpret_cast<const float2*>(a)[i];
    const float2 b2 = reinterpret_cast<const float2*>(b)[i];
    float2 c2;
    c2.x = a2.x * b2.x;
    c2.y = a2.y * b2.y;
    reinterpret_cast<float2*>(c)[i] = c2;
  }
}
