// RUN: kltrans opt -p unswizzle-blocks
// GATE: corpus/sgemm
// The grouped rasterization of corpus/sgemm/expert.cu (2-D grid, gx/gy copies of
// gridDim, a SG_GROUP macro) in a register-tiled kernel: 4 rows per thread.
#define SG_BM 64
#define SG_BN 16
#define SG_GROUP 8
// kltrans: launch sgemm_group grid=(ceil_div(N, 16), ceil_div(M, 64)) block=(16, 16)
extern "C" __global__ void sgemm_group(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    const int bm = blockIdx.y * SG_BM;
    const int bn = blockIdx.x * SG_BN;
    const int col = bn + threadIdx.x;
    for (int r = 0; r < 4; ++r) {
        const int row = bm + threadIdx.y + 16 * r;
        if (row < M && col < N) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k)
                acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
            C[(size_t)row * N + col] = alpha * acc + beta * C[(size_t)row * N + col];
        }
    }
}
