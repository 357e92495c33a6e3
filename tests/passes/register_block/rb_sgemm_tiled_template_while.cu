// RUN: kltrans opt -p 'register-block{tm=2,tn=4,layout=contiguous}' --assume 'TILE%4==0'
// A templated tiled sgemm written with while loops and a combined index declaration;
// layout=contiguous: thread (ty, tx) computes rows ty*2 .. ty*2+1 and columns tx*4 ..
// tx*4+3 of the block tile, and loads the same positions of the shared tiles. The block
// shrinks from (TILE, TILE) to (TILE / 4, TILE / 2), TILE a multiple of 4 by assumption.
// (Not GATEd: the gate cannot launch a template kernel whose contract names TILE; checked
// by hand on corpus/sgemm with the header at TILE = 16 and name expression
// sgemm_tiled_t<16>.)
// kltrans: launch sgemm_tiled_t grid=(ceil_div(N, TILE), ceil_div(M, TILE)) block=(TILE, TILE)
template <int TILE>
__global__ void sgemm_tiled_t(int M, int N, int K, float alpha, const float* __restrict__ A,
                              const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int gy = ty + TILE * blockIdx.y;
  const int gx = tx + TILE * blockIdx.x;
  float sum = 0.0f;
  int t = 0;
  while (t < K) {
    As[ty][tx] = (gy < M && t + tx < K) ? A[gy * K + (t + tx)] : 0.0f;
    Bs[ty][tx] = (t + ty < K && gx < N) ? B[(t + ty) * N + gx] : 0.0f;
    __syncthreads();
    int k = 0;
    while (k < TILE) {
      sum += As[ty][k] * Bs[k][tx];
      ++k;
    }
    __syncthreads();
    t += TILE;
  }
  if (gy < M && gx < N) {
    const int idx = gy * N + gx;
    C[idx] = alpha * sum + beta * C[idx];
  }
}

template __global__ void sgemm_tiled_t<16>(int, int, int, float, const float* __restrict__,
                                           const float* __restrict__, float, float* __restrict__);
