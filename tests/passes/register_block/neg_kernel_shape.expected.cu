// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: kernel-shape: is not declared by the first statement of the bound check
// The accumulator is declared before the bound check, not as its first statement: the
// pass only recognises the shape `if (row < M && col < N) { T acc = init; k-loop; store }`.
// kltrans: launch matmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  if (row < M && col < N) {
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
