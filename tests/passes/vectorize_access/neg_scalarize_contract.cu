// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: contract-shape: is neither ceil_div(ceil_div(n, 4), B) nor ceil_div(G, 4)
// The grid is written ceil_div(n, 1024) (4 elements x 256 threads): right for the vector
// kernel, but not in a form the pass can multiply back by 4.
// kltrans: launch copy grid=ceil_div(n, 1024) block=256
__global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    const float4 x4 = reinterpret_cast<const float4*>(x)[i];
    float4 y4;
    y4.x = x4.x;
    y4.y = x4.y;
    y4.z = x4.z;
    y4.w = x4.w;
    reinterpret_cast<float4*>(y)[i] = y4;
  }
}
