// RUN: kltrans opt -p 'coalesce-remap'
// CHECK-SKIP: no-barrier: __syncthreads
// A barrier inside the chunk loop: the threads meet there holding other elements after
// the remap (and a ragged guard around it would deadlock either way).
// kltrans: launch scale_sync grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void scale_sync(const float* __restrict__ x, float* __restrict__ y,
                                      float a, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i < n) y[i] = a * x[i];
    __syncthreads();
  }
}
