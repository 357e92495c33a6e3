// kltrans: launch sgemm_naive grid=(ceil_div(M, 32), ceil_div(N, 32)) block=(32, 32)
// Naive SGEMM, C = alpha * A * B + beta * C (row-major): one thread per element of C on
// 32 x 32 blocks. threadIdx.x runs over the rows of C, so the 32 threads of a warp read
// 32 different rows of A (K floats apart) and write a column of C: nothing is coalesced.

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A,
                            const float *B, float beta, float *C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;

  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
  }
}
