// RUN: kltrans opt -p 'unregister-block'
// GATE: corpus/sgemm
// A hand-written 32 x 32 tiled sgemm with a 4 x 4 register micro-tile per thread, 8 x 8
// threads, each thread's rows and columns adjacent (ty, tx scaled by 4), pragmas at
// column 0. Back to one output and one tile element per thread: block (32, 32).
// kltrans: launch sgemm_micro grid=(ceil_div(N, 32), ceil_div(M, 32)) block=(8, 8)
#define BT 32

extern "C" __global__ void sgemm_micro(int M, int N, int K, float alpha,
                                       const float* __restrict__ A,
                                       const float* __restrict__ B, float beta,
                                       float* __restrict__ C)
{
    __shared__ float sA[BT][BT];
    __shared__ float sB[BT][BT];
    const int ty = threadIdx.y * 4;
    const int tx = threadIdx.x * 4;
    const int r0 = BT * blockIdx.y + ty;
    const int c0 = BT * blockIdx.x + tx;
    float c[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            c[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BT) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                sA[ty + i][tx + j] = (r0 + i < M && k0 + (tx + j) < K) ? A[(r0 + i) * K + k0 + (tx + j)] : 0.0f;
                sB[ty + i][tx + j] = (k0 + (ty + i) < K && c0 + j < N) ? B[(k0 + (ty + i)) * N + (c0 + j)] : 0.0f;
            }
        __syncthreads();
#pragma unroll 8
        for (int kk = 0; kk < BT; ++kk) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                a[i] = sA[ty + i][kk];
#pragma unroll
            for (int j = 0; j < 4; ++j)
                b[j] = sB[kk][tx + j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    c[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (r0 + i < M && c0 + j < N)
                C[(r0 + i) * N + (c0 + j)] = alpha * c[i][j] + beta * C[(r0 + i) * N + (c0 + j)];
}
