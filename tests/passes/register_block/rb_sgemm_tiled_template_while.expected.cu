// RUN: kltrans opt -p 'register-block{tm=2,tn=4,layout=contiguous}' --assume 'TILE%4==0'
// A templated tiled sgemm written with while loops and a combined index declaration;
// layout=contiguous: thread (ty, tx) computes rows ty*2 .. ty*2+1 and columns tx*4 ..
// tx*4+3 of the block tile, and loads the same positions of the shared tiles. The block
// shrinks from (TILE, TILE) to (TILE / 4, TILE / 2), TILE a multiple of 4 by assumption.
// (Not GATEd: the gate cannot launch a template kernel whose contract names TILE; checked
// by hand on corpus/sgemm with the header at TILE = 16 and name expression
// sgemm_tiled_t<16>.)
// kltrans: launch sgemm_tiled_t grid=(ceil_div(N, TILE), ceil_div(M, TILE)) block=(TILE / 4, TILE / 2)
template <int TILE>
__global__ void sgemm_tiled_t(int M, int N, int K, float alpha, const float* __restrict__ A,
                              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x * 4, ty = threadIdx.y * 2;
  const int gy = ty + TILE * blockIdx.y;
  const int gx = tx + TILE * blockIdx.x;
  float sum[2][4];
  #pragma unroll
  for (int i = 0; i < 2; ++i)
    #pragma unroll
    for (int j = 0; j < 4; ++j)
      sum[i][j] = 0.0f;
  int t = 0;
  while (t < K) {
    #pragma unroll
    for (int i = 0; i < 2; ++i)
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        As[ty + i][tx + j] = (gy + i < M && t + (tx + j) < K) ? A[(gy + i) * K + (t + (tx + j))] : 0.0f;
        Bs[ty + i][tx + j] = (t + (ty + i) < K && gx + j < N) ? B[(t + (ty + i)) * N + (gx + j)] : 0.0f;
      }
    __syncthreads();
    int k = 0;
    while (k < TILE) {
      float a[2], b[4];
      #pragma unroll
      for (int i = 0; i < 2; ++i)
        a[i] = As[ty + i][k];
      #pragma unroll
      for (int j = 0; j < 4; ++j)
        b[j] = Bs[k][tx + j];
      #pragma unroll
      for (int i = 0; i < 2; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j)
          sum[i][j] += a[i] * b[j];
      ++k;
    }
    __syncthreads();
    t += TILE;
  }
  #pragma unroll
  for (int i = 0; i < 2; ++i)
    #pragma unroll
    for (int j = 0; j < 4; ++j)
      if (gy + i < M && gx + j < N) {
        const int idx = (gy + i) * N + (gx + j);
        C[idx] = alpha * sum[i][j] + beta * C[idx];
      }
}

template __global__ void sgemm_tiled_t<16>(int, int, int, float, const float* __restrict__,
                                           const float* __restrict__, float, float* __restrict__);
