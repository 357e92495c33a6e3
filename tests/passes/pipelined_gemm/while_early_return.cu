// RUN: kltrans opt -p 'pipelined-gemm{prefix=MM,helpers=mm,bk=8,stages=3}' --assume 'no_alias(*)'
// GATE: corpus/sgemm
// ROUNDTRIP: none: direct-gemm writes its own names, an if guard, a for loop and size_t indices, and keeps the MM_* macros
// threadIdx first, an early return, a while loop and the C index written twice.
// kltrans: launch matmul grid=(ceil_div(N, 32), ceil_div(M, 8)) block=(32, 8)
extern "C" __global__ void matmul(int M, int N, int K, float alpha, const float* A,
                                  const float* B, float beta, float* C)
{
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    int r = threadIdx.y + blockIdx.y * blockDim.y;
    if (r >= M || c >= N) return;
    float sum = 0.0f;
    int kk = 0;
    while (kk < K) {
        sum += A[r * K + kk] * B[kk * N + c];
        kk++;
    }
    C[r * N + c] = alpha * sum + beta * C[r * N + c];
}
