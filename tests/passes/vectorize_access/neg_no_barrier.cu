// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: no-barrier: __syncwarp at line
// A __syncwarp inside the body: copied per lane the warp would synchronize four times per
// thread where the original synchronized once.
// kltrans: launch publish grid=ceil_div(n, 256) block=256
__global__ void publish(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * 2.0f;
    __syncwarp();
    y[i] = v;
  }
}
