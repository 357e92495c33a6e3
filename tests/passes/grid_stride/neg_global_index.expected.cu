// RUN: kltrans opt -p 'grid-stride'
// CHECK-SKIP: global-index: is not the global thread index
// One block per row, one thread per column: `col` is threadIdx.x alone, not a global
// element index, so a grid-stride loop over it would mean nothing.
// kltrans: launch add_bias grid=rows block=cols
__global__ void add_bias(float* m, const float* bias, int rows, int cols) {
  int col = threadIdx.x;
  if (col < cols) m[blockIdx.x * cols + col] += bias[col];
}
