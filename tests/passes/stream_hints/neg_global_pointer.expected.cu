// RUN: kltrans opt -p 'stream-hints{arrays=t}'
// CHECK-SKIP: global-pointer: t points into __shared__ memory
// t points into a shared tile: the hint intrinsics are global-memory accesses.
// kltrans: launch stage grid=ceil_div(n, 256) block=256
extern "C" __global__ void stage(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float tile[256];
  float* t = tile;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = t[threadIdx.x ^ 1];
}
