// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: thread-map: is not a row or column index
// Rows are spread two apart (row = 2 * threadIdx.y + ...): a thread's rows cannot be
// written as row + i * blockDim.y or row + i.
// kltrans: launch matmul grid=(ceil_div(N, 16), ceil_div(M, 32)) block=(16, 16)
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * 2 * blockDim.y + 2 * threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
