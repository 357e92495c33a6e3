// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: launch-contract: is read from a host launcher
// The launch is a host launcher, not a `// kltrans: launch` header: the pass would have to
// divide the grid there, which it does not do.
__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}

void launch_matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  dim3 block(16, 16);
  dim3 grid((N + 15) / 16, (M + 15) / 16);
  matmul<<<grid, block>>>(A, B, C, M, N, K);
}
