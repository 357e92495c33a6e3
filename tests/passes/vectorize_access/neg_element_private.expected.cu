// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: element-private: reads threadIdx.x
// The sign alternates with the thread's parity: once a thread holds four elements,
// threadIdx.x no longer says which of them is odd.
// kltrans: launch alternate grid=ceil_div(n, 256) block=256
__global__ void alternate(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (threadIdx.x & 1) ? -x[i] : x[i];
}
