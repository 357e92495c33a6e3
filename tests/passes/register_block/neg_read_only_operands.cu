// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: read-only-operands: A is written by the kernel
// The product is written over A (in place, M x N == M x K): fragments of A loaded once per
// k by one thread can be overwritten by another thread's store.
// kltrans: launch matmul_inplace grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void matmul_inplace(float* A, const float* B, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    A[row * N + col] = acc;
  }
}
