// kltrans: launch sgemm_vectorized<128, 128, 8, 8, 8> grid=(ceil_div(N, 128), ceil_div(M, 128)) block=128*128/(8*8)
// SGEMM with 2-D block tiling and 128-bit memory accesses: the A and B chunks are read
// from global memory as float4 (four consecutive floats of a row), and C is read and
// written as float4. The A chunk is stored transposed in shared memory (As[k][m]), so the
// TM values of A a thread needs at step k are contiguous and can be fetched with wide
// shared loads, like the TN values of B. Needs K and N multiples of 4 (16-byte aligned
// rows). Assumes M % BM, N % BN, K % BK == 0. Instantiated as <128, 128, 8, 8, 8>.

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void sgemm_vectorized(int M, int N, int K, float alpha, const float *A,
                                 const float *B, float beta, float *C) {
  const int blockRow = blockIdx.y;
  const int blockCol = blockIdx.x;
  const int numThreads = (BM * BN) / (TM * TN);

  // which TM x TN sub-tile of the block tile this thread owns
  const int innerCol = threadIdx.x % (BN / TN);
  const int innerRow = threadIdx.x / (BN / TN);

  __shared__ float As[BK * BM];  // transposed: As[k * BM + m]
  __shared__ float Bs[BK * BN];

  A += blockRow * BM * K;
  B += blockCol * BN;
  C += blockRow * BM * N + blockCol * BN;

  // the float4 of each chunk this thread copies: one per stride of rows
  const int aRow = threadIdx.x / (BK / 4);
  const int aCol = threadIdx.x % (BK / 4);
  const int aStride = numThreads / (BK / 4);
  const int bRow = threadIdx.x / (BN / 4);
  const int bCol = threadIdx.x % (BN / 4);
  const int bStride = numThreads / (BN / 4);

  float sum[TM * TN] = {0.0f};
  float regM[TM];
  float regN[TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int off = 0; off < BM; off += aStride) {
      const float4 a4 = reinterpret_cast<const float4 *>(&A[(aRow + off) * K + aCol * 4])[0];
      As[(aCol * 4 + 0) * BM + aRow + off] = a4.x;
      As[(aCol * 4 + 1) * BM + aRow + off] = a4.y;
      As[(aCol * 4 + 2) * BM + aRow + off] = a4.z;
      As[(aCol * 4 + 3) * BM + aRow + off] = a4.w;
    }
    for (int off = 0; off < BK; off += bStride) {
      reinterpret_cast<float4 *>(&Bs[(bRow + off) * BN + bCol * 4])[0] =
          reinterpret_cast<const float4 *>(&B[(bRow + off) * N + bCol * 4])[0];
    }
    __syncthreads();

    A += BK;
    B += BK * N;

    for (int k = 0; k < BK; ++k) {
      for (int m = 0; m < TM; ++m) {
        regM[m] = As[k * BM + innerRow * TM + m];
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
    for (int n = 0; n < TN; n += 4) {
      const int idx = (innerRow * TM + m) * N + innerCol * TN + n;
      float4 c4 = reinterpret_cast<float4 *>(&C[idx])[0];
      c4.x = alpha * sum[m * TN + n + 0] + beta * c4.x;
      c4.y = alpha * sum[m * TN + n + 1] + beta * c4.y;
      c4.z = alpha * sum[m * TN + n + 2] + beta * c4.z;
      c4.w = alpha * sum[m * TN + n + 3] + beta * c4.w;
      reinterpret_cast<float4 *>(&C[idx])[0] = c4;
    }
  }
}
