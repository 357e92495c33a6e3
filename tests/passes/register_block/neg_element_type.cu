// RUN: kltrans opt -p 'register-block'
// CHECK-SKIP: element-type: the fragments a[] and b[] take the accumulator's type
// float inputs accumulated in double: the fragments would be double and each product would
// round differently from the float product the kernel computes.
// kltrans: launch matmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = (float)acc;
  }
}
