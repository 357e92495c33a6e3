// RUN: kltrans opt -p 'register-block{tm=2,tn=4,layout=contiguous}'
// GATE: corpus/sgemm
// A naive sgemm with the index spelled threadIdx.x + blockDim.x * blockIdx.x, named
// gid_x/gid_y, B * A, a CEIL_DIV macro in the launch and a while loop over k. With
// layout=contiguous each thread computes rows row..row+1 and columns col..col+3 (the
// thread index is scaled by 2 and 4); the grid is divided by 4 in x and 2 in y.
// kltrans: launch sgemm_rows grid=(CEIL_DIV(N, 16), CEIL_DIV(M, 16)) block=(16, 16)
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void sgemm_rows(int M, int N, int K, float alpha, const float* A,
                                      const float* B, float beta, float* C) {
  const int gid_x = threadIdx.x + blockDim.x * blockIdx.x;
  const int gid_y = threadIdx.y + blockDim.y * blockIdx.y;
  if (gid_x < N && gid_y < M) {
    float dot = 0.0f;
    int k = 0;
    while (k < K) {
      dot += B[k * N + gid_x] * A[gid_y * K + k];
      k++;
    }
    C[gid_y * N + gid_x] = alpha * dot + beta * C[gid_y * N + gid_x];
  }
}
