// RUN: kltrans opt -p 'register-block{tm=1,tn=1}'
// CHECK-SKIP: register-tile: tm = tn = 1 is one output per thread: nothing to block
// A 1 x 1 tile is the kernel as it is.
// kltrans: launch imatmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void imatmul(const int* A, const int* B, int* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    int acc = 0;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
