// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: barrier-phases: after the first barrier uses the thread's row or column
// Two load phases per k-tile (A's tile, a barrier, then B's tile): only one load phase
// before the first barrier is played TM x TN times per thread.
// kltrans: launch matmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define TILE 16

extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    __syncthreads();
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N)
    C[row * N + col] = acc;
}
