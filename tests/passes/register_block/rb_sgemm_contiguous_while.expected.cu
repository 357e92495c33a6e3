// RUN: kltrans opt -p 'register-block{tm=2,tn=4,layout=contiguous}'
// GATE: corpus/sgemm
// A naive sgemm with the index spelled threadIdx.x + blockDim.x * blockIdx.x, named
// gid_x/gid_y, B * A, a CEIL_DIV macro in the launch and a while loop over k. With
// layout=contiguous each thread computes rows row..row+1 and columns col..col+3 (the
// thread index is scaled by 2 and 4); the grid is divided by 4 in x and 2 in y.
// kltrans: launch sgemm_rows grid=(CEIL_DIV(CEIL_DIV(N, 16), 4), CEIL_DIV(CEIL_DIV(M, 16), 2)) block=(16, 16)
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void sgemm_rows(int M, int N, int K, float alpha, const float* A,
                                      const float* B, float beta, float* C) {
  const int gid_x = threadIdx.x * 4 + blockDim.x * blockIdx.x * 4;
  const int gid_y = threadIdx.y * 2 + blockDim.y * blockIdx.y * 2;
  float dot[2][4];
  #pragma unroll
  for (int i = 0; i < 2; ++i)
    #pragma unroll
    for (int j = 0; j < 4; ++j)
      dot[i][j] = 0.0f;
  int k = 0;
  while (k < K) {
    float a[2], b[4];
    #pragma unroll
    for (int i = 0; i < 2; ++i)
      a[i] = gid_y + i < M ? A[(gid_y + i) * K + k] : 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; ++j)
      b[j] = gid_x + j < N ? B[k * N + (gid_x + j)] : 0.0f;
    #pragma unroll
    for (int i = 0; i < 2; ++i)
      #pragma unroll
      for (int j = 0; j < 4; ++j)
        dot[i][j] += b[j] * a[i];
    k++;
  }
  #pragma unroll
  for (int i = 0; i < 2; ++i)
    #pragma unroll
    for (int j = 0; j < 4; ++j)
      if (gid_x + j < N && gid_y + i < M) {
        C[(gid_y + i) * N + (gid_x + j)] = alpha * dot[i][j] + beta * C[(gid_y + i) * N + (gid_x + j)];
      }
}
