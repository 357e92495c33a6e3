// kltrans: launch sgemm_blocktile_1d<64, 64, 8, 8> grid=(ceil_div(N, 64), ceil_div(M, 64)) block=64*64/8
// SGEMM with 1-D block tiling: a block computes a BM x BN tile of C with BM * BN / TM
// threads, and each thread accumulates TM results down one column of the tile in
// registers. Every B value read from shared memory is reused TM times, so the inner loop
// does TM multiply-adds per shared load of B. K advances in BK-wide chunks; each thread
// copies one element of the A chunk (BM x BK) and one of the B chunk (BK x BN), which
// needs BM * BK == BN * BK == the thread count. Assumes M % BM, N % BN, K % BK == 0.
// Instantiated as <64, 64, 8, 8>: 512 threads.

template <const int BM, const int BN, const int BK, const int TM>
__global__ void sgemm_blocktile_1d(int M, int N, int K, float alpha, const float *A,
                                   const float *B, float beta, float *C) {
  const int blockRow = blockIdx.y;
  const int blockCol = blockIdx.x;

  // this thread's column of C, and which group of TM rows it owns
  const int innerCol = threadIdx.x % BN;
  const int innerRow = threadIdx.x / BN;

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += blockRow * BM * K;
  B += blockCol * BN;
  C += blockRow * BM * N + blockCol * BN;

  // the element of each chunk this thread copies
  const int aRow = threadIdx.x / BK;
  const int aCol = threadIdx.x % BK;
  const int bRow = threadIdx.x / BN;
  const int bCol = threadIdx.x % BN;

  float sum[TM] = {0.0f};

  for (int k0 = 0; k0 < K; k0 += BK) {
    As[aRow * BK + aCol] = A[aRow * K + aCol];
    Bs[bRow * BN + bCol] = B[bRow * N + bCol];
    __syncthreads();

    A += BK;
    B += BK * N;

    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k * BN + innerCol];
      for (int m = 0; m < TM; ++m) {
        sum[m] += As[(innerRow * TM + m) * BK + k] * b;
      }
    }
    __syncthreads();
  }

  for (int m = 0; m < TM; ++m) {
    const int idx = (innerRow * TM + m) * N + innerCol;
    C[idx] = alpha * sum[m] + beta * C[idx];
  }
}
