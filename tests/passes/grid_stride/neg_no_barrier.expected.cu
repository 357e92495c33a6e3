// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: no-barrier: warp primitive __shfl_xor_sync
// Neighbouring lanes swap values with a full-mask shuffle: on the last, ragged iteration
// of a grid-stride loop part of the warp has left and the shuffle would hang.
// kltrans: launch swap_pairs grid=ceil_div(n, 256) block=256
__global__ void swap_pairs(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = __shfl_xor_sync(0xffffffffu, v, 1);
  }
}
