// RUN: kltrans opt -p 'pipelined-gemm' --assume 'no_alias(*)'
// GATE: corpus/sgemm
// The textbook kernel (one thread per element of C, a k loop over global memory), spelled as
// direct-gemm writes it and with the tile macros defined: it round-trips.
// kltrans: launch gemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_BK 16
#define GEMM_STAGES 2

extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
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
