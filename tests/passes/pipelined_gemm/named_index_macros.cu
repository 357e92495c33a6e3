// RUN: kltrans opt -p 'pipelined-gemm{body=sgemm_tiled,restrict=true}' --assume 'no_alias(*)'
// GATE: corpus/sgemm
// ROUNDTRIP: none: direct-gemm writes its own names and spelling, and keeps the GEMM_* macros
// Named indices (row declared second, blockDim first), a macro launch block, k++ and a
// loop body without braces; the body's pointers get __restrict__.
// kltrans: launch sgemm grid=(ceil_div(N, BLOCK), ceil_div(M, BLOCK)) block=(BLOCK, BLOCK)
#define BLOCK 16
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* __restrict__ A,
                                 const float* __restrict__ B, float beta, float* __restrict__ C)
{
    const int gx = blockDim.x * blockIdx.x + threadIdx.x;
    const int gy = blockDim.y * blockIdx.y + threadIdx.y;
    if (gx < N && gy < M) {
        float v = 0.0f;
        for (int e = 0; e < K; e++)
            v += A[(size_t)gy * K + e] * B[(size_t)e * N + gx];
        const size_t o = (size_t)gy * N + gx;
        C[o] = alpha * v + beta * C[o];
    }
}
