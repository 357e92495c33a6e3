// kltrans: launch sgemm_warptile<128, 128, 16, 32, 64, 2, 8, 4, 256> grid=(ceil_div(N, 128), ceil_div(M, 128)) block=256
// SGEMM with warp tiling, the level between block tile and thread tile: the BM x BN block
// tile is split into WM x WN warp tiles, one per warp, and each warp tile into
// WMITER x WNITER sub-tiles of WSUBM x WSUBN that the 32 lanes cover with their TM x TN
// thread tiles. A lane's results are therefore spread over the warp tile: its fragments
// of A and B come from WMITER x WNITER places, the lanes of a warp read shared memory in
// conflict-free 128-byte runs, and each warp touches only its own rows and columns of the
// chunk. float4 global loads and stores, A stored transposed, as before.
// Assumes M % BM, N % BN, K % BK == 0 (K, N multiples of 4).
// Instantiated as <128, 128, 16, 32, 64, 2, 8, 4, 256>: 8 warps as 4 x 2 warp tiles of
// 32 x 64, WMITER = 1, sub-tiles 32 x 32, 64 results per thread.

constexpr int WARPSIZE = 32;

template <const int BM, const int BN, const int BK, const int WM, const int WN,
          const int WNITER, const int TM, const int TN, const int NUM_THREADS>
__global__ void sgemm_warptile(int M, int N, int K, float alpha, const float *A,
                               const float *B, float beta, float *C) {
  const int blockRow = blockIdx.y;
  const int blockCol = blockIdx.x;

  // this warp's tile inside the block tile
  const int warpIdx = threadIdx.x / WARPSIZE;
  const int warpCol = warpIdx % (BN / WN);
  const int warpRow = warpIdx / (BN / WN);

  // warp sub-tiles, and this lane's TM x TN tile inside each of them
  constexpr int WMITER = (WM * WN) / (WARPSIZE * TM * TN * WNITER);
  constexpr int WSUBM = WM / WMITER;
  constexpr int WSUBN = WN / WNITER;
  const int lane = threadIdx.x % WARPSIZE;
  const int laneCol = lane % (WSUBN / TN);
  const int laneRow = lane / (WSUBN / TN);

  __shared__ float As[BK * BM];  // transposed: As[k * BM + m]
  __shared__ float Bs[BK * BN];

  A += blockRow * BM * K;
  B += blockCol * BN;
  C += (blockRow * BM + warpRow * WM) * N + blockCol * BN + warpCol * WN;

  // the float4 of each chunk this thread copies: one per stride of rows
  const int aRow = threadIdx.x / (BK / 4);
  const int aCol = threadIdx.x % (BK / 4);
  const int aStride = NUM_THREADS / (BK / 4);
  const int bRow = threadIdx.x / (BN / 4);
  const int bCol = threadIdx.x % (BN / 4);
  const int bStride = NUM_THREADS / (BN / 4);

  float sum[WMITER * TM * WNITER * TN] = {0.0f};
  float regM[WMITER * TM];
  float regN[WNITER * TN];

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
      for (int wm = 0; wm < WMITER; ++wm) {
        for (int m = 0; m < TM; ++m) {
          regM[wm * TM + m] = As[k * BM + warpRow * WM + wm * WSUBM + laneRow * TM + m];
        }
      }
      for (int wn = 0; wn < WNITER; ++wn) {
        for (int n = 0; n < TN; ++n) {
          regN[wn * TN + n] = Bs[k * BN + warpCol * WN + wn * WSUBN + laneCol * TN + n];
        }
      }
      for (int wm = 0; wm < WMITER; ++wm) {
        for (int wn = 0; wn < WNITER; ++wn) {
          for (int m = 0; m < TM; ++m) {
            for (int n = 0; n < TN; ++n) {
              sum[(wm * TM + m) * (WNITER * TN) + wn * TN + n] +=
                  regM[wm * TM + m] * regN[wn * TN + n];
            }
          }
        }
      }
    }
    __syncthreads();
  }

  for (int wm = 0; wm < WMITER; ++wm) {
    for (int wn = 0; wn < WNITER; ++wn) {
      float *Csub = C + wm * WSUBM * N + wn * WSUBN;
      for (int m = 0; m < TM; ++m) {
        for (int n = 0; n < TN; n += 4) {
          const int idx = (laneRow * TM + m) * N + laneCol * TN + n;
          const int s = (wm * TM + m) * (WNITER * TN) + wn * TN + n;
          float4 c4 = reinterpret_cast<float4 *>(&Csub[idx])[0];
          c4.x = alpha * sum[s + 0] + beta * c4.x;
          c4.y = alpha * sum[s + 1] + beta * c4.y;
          c4.z = alpha * sum[s + 2] + beta * c4.z;
          c4.w = alpha * sum[s + 3] + beta * c4.w;
          reinterpret_cast<float4 *>(&Csub[idx])[0] = c4;
        }
      }
    }
  }
}
