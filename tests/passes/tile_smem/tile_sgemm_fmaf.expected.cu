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
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[row * lda + (k0 + threadIdx.x)] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? B[(k0 + threadIdx.y) * ldb + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < 32; i++)
            sum = fmaf(As[threadIdx.y][i], Bs[i][threadIdx.x], sum);
        __syncthreads();
    }
    if (col < N && row < M) {
        C[row * N + col] = alpha * sum + beta * C[row * N + col];
    }
}
