// RUN: kltrans opt -p 'add-launch-bounds{max_threads=2048}'
// CHECK-SKIP: max-threads-limit: exceeds the hardware limit of 1024
// No GPU runs more than 1024 threads in one block: the bound would be meaningless.
// kltrans: launch square grid=ceil_div(n, 256) block=256
__global__ void square(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * v[i];
}
