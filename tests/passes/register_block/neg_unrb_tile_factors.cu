// RUN: kltrans opt -p 'unregister-block'
// CHECK-SKIP: tile-factors: the tile is 3 x 2
// A 3 x 2 micro-tile: register-block makes tiles of 1, 2, 4 or 8 only, so this is not the
// inverse of one of its rewrites.
// kltrans: launch matmul grid=(ceil_div(ceil_div(N, 16), 2), ceil_div(ceil_div(M, 16), 3)) block=(16, 16)
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y * 3 + threadIdx.y;
  int col = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  float acc[3][2];
  #pragma unroll
  for (int i = 0; i < 3; ++i)
    #pragma unroll
    for (int j = 0; j < 2; ++j)
      acc[i][j] = 0.0f;
  for (int k = 0; k < K; ++k) {
    float a[3], b[2];
    #pragma unroll
    for (int i = 0; i < 3; ++i)
      a[i] = row + i * blockDim.y < M ? A[(row + i * blockDim.y) * K + k] : 0.0f;
    #pragma unroll
    for (int j = 0; j < 2; ++j)
      b[j] = col + j * blockDim.x < N ? B[k * N + (col + j * blockDim.x)] : 0.0f;
    #pragma unroll
    for (int i = 0; i < 3; ++i)
      #pragma unroll
      for (int j = 0; j < 2; ++j)
        acc[i][j] += a[i] * b[j];
  }
  #pragma unroll
  for (int i = 0; i < 3; ++i)
    #pragma unroll
    for (int j = 0; j < 2; ++j)
      if (row + i * blockDim.y < M && col + j * blockDim.x < N) {
        C[(row + i * blockDim.y) * N + (col + j * blockDim.x)] = acc[i][j];
      }
}
