// RUN: kltrans opt -p 'unregister-block'
// CHECK-SKIP: contract-shape: is not ceil_div(G, 2)
// The grid is written ceil_div(N, 32): the same launch, but not ceil_div(G, 2), so the grid
// of one output per thread is not readable from it.
// kltrans: launch matmul grid=(ceil_div(N, 32), ceil_div(M, 32)) block=(16, 16)
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y * 2 + threadIdx.y;
  int col = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  float acc[2][2];
  #pragma unroll
  for (int i = 0; i < 2; ++i)
    #pragma unroll
    for (int j = 0; j < 2; ++j)
      acc[i][j] = 0.0f;
  for (int k = 0; k < K; ++k) {
    float a[2], b[2];
    #pragma unroll
    for (int i = 0; i < 2; ++i)
      a[i] = row + i * blockDim.y < M ? A[(row + i * blockDim.y) * K + k] : 0.0f;
    #pragma unroll
    for (int j = 0; j < 2; ++j)
      b[j] = col + j * blockDim.x < N ? B[k * N + (col + j * blockDim.x)] : 0.0f;
    #pragma unroll
    for (int i = 0; i < 2; ++i)
      #pragma unroll
      for (int j = 0; j < 2; ++j)
        acc[i][j] += a[i] * b[j];
  }
  #pragma unroll
  for (int i = 0; i < 2; ++i)
    #pragma unroll
    for (int j = 0; j < 2; ++j)
      if (row + i * blockDim.y < M && col + j * blockDim.x < N) {
        C[(row + i * blockDim.y) * N + (col + j * blockDim.x)] = acc[i][j];
      }
}
