// RUN: kltrans opt -p 'add-launch-bounds{max_threads=1024,min_blocks=4}'
// CHECK-SKIP: occupancy-fits: fit no SM
// Four resident blocks of 1024 threads would need 4096 threads per SM; no SM holds that
// many (and 16 registers per thread would spill).
// kltrans: launch fill grid=ceil_div(n, 1024) block=1024
__global__ void fill(float* v, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = value;
}
