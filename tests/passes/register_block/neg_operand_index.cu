// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: operand-index: one factor must be indexed by the row only
// A matrix times a vector broadcast over columns: x[k] depends on neither the row nor the
// column, so there is no B fragment to reuse across the tile's columns.
// kltrans: launch scale_rows grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void scale_rows(const float* A, const float* x, float* C, int M, int N,
                                      int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * x[k];
    C[row * N + col] = acc;
  }
}
