// kltrans: launch sgemm_smem_blocking<32> grid=(ceil_div(M, 32), ceil_div(N, 32)) block=32*32
// SGEMM with shared-memory cache blocking: each block owns a BLOCKSIZE x BLOCKSIZE tile
// of C and walks K in BLOCKSIZE-wide chunks. Per chunk every thread copies one element of
// A and one of B into shared memory, the block synchronizes, and the dot products read
// the chunk from shared memory. The A, B and C pointers are moved to the block's tiles up
// front and A, B advance by one chunk per iteration. Assumes M, N, K multiples of
// BLOCKSIZE (no bounds checks).

template <const int BLOCKSIZE>
__global__ void sgemm_smem_blocking(int M, int N, int K, float alpha, const float *A,
                                    const float *B, float beta, float *C) {
  const int blockRow = blockIdx.x;
  const int blockCol = blockIdx.y;

  __shared__ float As[BLOCKSIZE * BLOCKSIZE];
  __shared__ float Bs[BLOCKSIZE * BLOCKSIZE];

  // position of this thread inside the tile
  const int innerRow = threadIdx.x / BLOCKSIZE;
  const int innerCol = threadIdx.x % BLOCKSIZE;

  A += blockRow * BLOCKSIZE * K;
  B += blockCol * BLOCKSIZE;
  C += blockRow * BLOCKSIZE * N + blockCol * BLOCKSIZE;

  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BLOCKSIZE) {
    As[innerRow * BLOCKSIZE + innerCol] = A[innerRow * K + innerCol];
    Bs[innerRow * BLOCKSIZE + innerCol] = B[innerRow * N + innerCol];
    __syncthreads();

    A += BLOCKSIZE;
    B += BLOCKSIZE * N;

    for (int k = 0; k < BLOCKSIZE; ++k) {
      sum += As[innerRow * BLOCKSIZE + k] * Bs[k * BLOCKSIZE + innerCol];
    }
    __syncthreads();
  }
  C[innerRow * N + innerCol] = alpha * sum + beta * C[innerRow * N + innerCol];
}
