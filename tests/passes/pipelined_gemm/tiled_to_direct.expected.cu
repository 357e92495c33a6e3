// RUN: kltrans opt -p 'direct-gemm' --assume 'no_alias(*)'
// GATE: corpus/sgemm
// What pipelined-gemm writes (bk=8, 3 stages, prefixes MM/mm) goes back to one thread per output.
// kltrans: launch matmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define MM_BM 128
#define MM_BN 128
#define MM_BK 8
#define MM_STAGES 3

extern "C" __global__ void matmul(int M, int N, int K, float alpha, const float* A,
                                  const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
