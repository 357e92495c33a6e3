// kltrans: launch sgemm_coalesced<32> grid=(ceil_div(M, 32), ceil_div(N, 32)) block=32*32
// SGEMM with coalesced global accesses: the block is one-dimensional (BLOCKSIZE^2
// threads) and the thread index is split so that consecutive threads take consecutive
// columns of the same row of C. A warp then reads one A element (a broadcast), 32
// neighbouring floats of a B row, and writes 32 neighbouring floats of C.

template <const int BLOCKSIZE>
__global__ void sgemm_coalesced(int M, int N, int K, float alpha, const float *A,
                                const float *B, float beta, float *C) {
  const int row = blockIdx.x * BLOCKSIZE + threadIdx.x / BLOCKSIZE;
  const int col = blockIdx.y * BLOCKSIZE + threadIdx.x % BLOCKSIZE;

  if (row < M && col < N) {
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
      sum += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
  }
}
