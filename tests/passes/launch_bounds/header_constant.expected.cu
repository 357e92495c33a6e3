// RUN: kltrans opt -p 'add-launch-bounds'
// The launch header fixes 256 threads per block: max_threads=auto writes that bound.
// kltrans: launch saxpy grid=ceil_div(n, 256) block=256
__global__ void __launch_bounds__(256) saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
