// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: no-aliasing-store: other threads' writes become visible
// Thread 0 rewrites pivot[0] in shared memory each round and the loop synchronizes: every
// iteration must read the new value.
__global__ void rounds(float* data, int n) {
  __shared__ float pivot[1];
  float v = data[blockIdx.x * blockDim.x + threadIdx.x];
  for (int r = 0; r < 4; ++r) {
    if (threadIdx.x == 0) pivot[0] = v * (float)r;
    __syncthreads();
    v = v - pivot[0];
    __syncthreads();
  }
  data[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
