// RUN: kltrans opt -p 'register-block{tm=8,tn=4}'
// CHECK-SKIP: launch-contract: block.y = 12 is not a multiple of 8
// A tiled kernel on 12 x 12 tiles: 12 rows of the block cannot be shared by threads that
// each play 8 of them.
// kltrans: launch matmul grid=(ceil_div(N, 12), ceil_div(M, 12)) block=(12, 12)
#define TILE 12

extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N)
    C[row * N + col] = acc;
}
