// RUN: kltrans opt -p 'tile-smem{tile=32}'
// GATE: corpus/sgemm
// Strides named lda/ldb, the index written threadIdx.x + blockDim.x * blockIdx.x, the
// product accumulated with fmaf, the guard written col-first: 32 x 32 tiles (a block of
// 1024 threads).
// kltrans: launch sgemm_fmaf grid=(ceil_div(N, 32), ceil_div(M, 32)) block=(32, 32)
#define TILE_W 32

extern "C" __global__ void sgemm_fmaf(int M, int N, int K, float alpha,
                                      const float* __restrict__ A,
                                      const float* __restrict__ B, float beta,
                                      float* __restrict__ C)
{
    const int lda = K;
    const int ldb = N;
    const int col = threadIdx.x + blockDim.x * blockIdx.x;
    const int row = threadIdx.y + blockDim.y * blockIdx.y;
    if (col < N && row < M) {
        float sum = 0.0f;
        for (int i = 0; i < K; i++)
            sum = fmaf(A[row * lda + i], B[i * ldb + col], sum);
        C[row * N + col] = alpha * sum + beta * C[row * N + col];
    }
}
