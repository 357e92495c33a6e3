// kltrans: launch sgemm_blocktile_2d<128, 128, 8, 8, 8> grid=(ceil_div(N, 128), ceil_div(M, 128)) block=128*128/(8*8)
// SGEMM with 2-D block tiling: each thread now computes a TM x TN register tile of C.
// Per k step it loads TM values of A and TN values of B from shared memory into
// registers and does TM * TN multiply-adds with them (an outer product), so shared-memory
// traffic per FMA drops from 1/TM to (TM + TN) / (TM * TN). With fewer threads than
// chunk elements, the chunk copies loop with a stride of whole rows.
// Assumes M % BM, N % BN, K % BK == 0. Instantiated as <128, 128, 8, 8, 8>: 256 threads.

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void sgemm_blocktile_2d(int M, int N, int K, float alpha, const float *A,
                                   const float *B, float beta, float *C) {
  const int blockRow = blockIdx.y;
  const int blockCol = blockIdx.x;
  const int numThreads = (BM * BN) / (TM * TN);

  // which TM x TN sub-tile of the block tile this thread owns
  const int innerCol = threadIdx.x % (BN / TN);
  const int innerRow = threadIdx.x / (BN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += blockRow * BM * K;
  B += blockCol * BN;
  C += blockRow * BM * N + blockCol * BN;

  // the elements of each chunk this thread copies: one per stride of rows
  const int aRow = threadIdx.x / BK;
  const int aCol = threadIdx.x % BK;
  const int aStride = numThreads / BK;
  const int bRow = threadIdx.x / BN;
  const int bCol = threadIdx.x % BN;
  const int bStride = numThreads / BN;

  float sum[TM * TN] = {0.0f};
  float regM[TM];
  float regN[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int off = 0; off < BM; off += aStride) {
      As[(aRow + off) * BK + aCol] = A[(aRow + off) * K + aCol];
    }
    for (int off = 0; off < BK; off += bStride) {
      Bs[(bRow + off) * BN + bCol] = B[(bRow + off) * N + bCol];
    }
    __syncthreads();

    A += BK;
    B += BK * N;

    for (int k = 0; k < BK; ++k) {
      for (int m = 0; m < TM; ++m) {
        regM[m] = As[(innerRow * TM + m) * BK + k];
      }
      for (int n = 0; n < TN; ++n) {
        regN[n] = Bs[k * BN + innerCol * TN + n];
      }
      for (int m = 0; m < TM; ++m) {
        for (int n = 0; n < TN; ++n) {
          sum[m * TN + n] += regM[m] * regN[n];
        }
      }
    }
    __syncthreads();
  }

  for (int m = 0; m < TM; ++m) {
    for (int n = 0; n < TN; ++n) {
      const int idx = (innerRow * TM + m) * N + innerCol * TN + n;
      C[idx] = alpha * sum[m * TN + n] + beta * C[idx];
    }
  }
}
