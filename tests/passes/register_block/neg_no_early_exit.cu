// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: no-early-exit: leaves the kernel early
// The bound check is an early return: a thread that plays 4 x 4 old threads cannot return
// for one of them, and the pass only moves an `if (row < M && col < N) { ... }` guard.
// kltrans: launch matmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}
