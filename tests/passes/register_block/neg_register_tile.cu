// RUN: kltrans opt -p 'register-block{tm=8,tn=8}'
// CHECK-SKIP: register-tile: need 160 registers per thread, over the budget of 96
// A dgemm: an 8 x 8 tile of doubles plus two 8-element fragments is 80 doubles, 160
// 32-bit registers per thread: it would spill.
// kltrans: launch dgemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void dgemm(const double* A, const double* B, double* C, int M, int N,
                                 int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
