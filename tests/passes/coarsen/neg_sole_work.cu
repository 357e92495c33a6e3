// RUN: kltrans opt -p 'coarsen'
// CHECK-SKIP: sole-work: runs outside the guarded statement
// Thread 0 of every block also records the block's start: with four chunks per block
// the records would be for a quarter of the blocks.
// kltrans: launch scale_mark grid=ceil_div(n, 256) block=256
__global__ void scale_mark(const float* x, float* y, int* block_start, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) block_start[blockIdx.x] = i;
  if (i < n) y[i] = 3.0f * x[i];
}
