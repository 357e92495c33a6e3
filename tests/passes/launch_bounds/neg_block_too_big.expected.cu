// RUN: kltrans opt -p 'add-launch-bounds{max_threads=128}'
// CHECK-SKIP: block-fits: a block of 256 threads exceeds max_threads=128
// The kernel is launched with 256 threads per block; a bound of 128 would make that
// launch fail ("too many resources requested for launch").
// kltrans: launch negate grid=ceil_div(n, 256) block=256
__global__ void negate(float* v, int n) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) v[tid] = -v[tid];
}
