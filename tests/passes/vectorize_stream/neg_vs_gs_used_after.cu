// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: map-loop: i is used after the loop
// A grid-stride map that records where each thread stopped: the vector path would leave
// i at another value, so the loop without an initializer is refused.
// kltrans: launch scale_stop grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void scale_stop(const float* x, float* y, int* stop, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int me = i;
  for (; i < n; i += blockDim.x * gridDim.x) {
    y[i] = a * x[i];
  }
  stop[me] = i;
}
