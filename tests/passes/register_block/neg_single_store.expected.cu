// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: single-store: the epilogue writes global memory 2 times
// The kernel stores the product and its transpose: two global writes per output; the pass
// handles one store per (row, col).
// kltrans: launch matmul_both grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void matmul_both(const float* A, const float* B, float* C, float* Ct,
                                       int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
    Ct[col * M + row] = acc;
  }
}
