// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: no-barrier: inside the body
// A barrier under the guard (already fragile): in the coarsened loop threads past n
// would skip it on some iterations and not others.
// kltrans: launch stage grid=ceil_div(n, 256) block=256
__global__ void stage(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * 2.0f;
    __syncthreads();
    y[i] = v;
  }
}
