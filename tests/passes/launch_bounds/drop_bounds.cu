// RUN: kltrans opt -p 'drop-launch-bounds'
// The attribute goes; the kernel computes the same values with the default register budget.
// kltrans: launch scale_rows grid=(ceil_div(cols, 128), rows) block=128
__global__ void __launch_bounds__(128, 4) scale_rows(float* m, const float* s, int rows, int cols) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y;
  if (col < cols) m[row * cols + col] *= s[row];
}
