// RUN: kltrans opt -p 'hoist-invariant'
// CSR SpMV: the loop bound row_ptr[row + 1] is re-read at every test of the condition;
// the condition runs at least once, so reading it before the loop is always safe.
__global__ void spmv_csr(int rows, const int* row_ptr, const int* col_idx, const float* vals,
                         const float* x, float* y) {
  int row = threadIdx.x + blockDim.x * blockIdx.x;
  if (row < rows) {
    float dot = 0.0f;
    const int row_ptr_row_1 = row_ptr[row + 1];
    for (int j = row_ptr[row]; j < row_ptr_row_1; j++)
      dot += vals[j] * x[col_idx[j]];
    y[row] = dot;
  }
}
