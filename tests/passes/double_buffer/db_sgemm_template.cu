// RUN: kltrans opt -p 'double-buffer'
// GATE: corpus/sgemm
// Tile size as a template parameter of a device function, the K loop stepping by the tile
// width (k0 += TILE), the index spelled threadIdx.x + blockIdx.x * TILE, if/else loads.
// kltrans: launch sgemm_tpl grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)

template <int TILE>
__device__ void sgemm_tile_body(int M, int N, int K, float alpha, const float* __restrict__ A,
                                const float* __restrict__ B, float beta, float* __restrict__ C)
{
    __shared__ float sA[TILE][TILE + 1];
    __shared__ float sB[TILE][TILE];
    const int row = threadIdx.y + blockIdx.y * TILE;
    const int col = threadIdx.x + blockIdx.x * TILE;
    float sum = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        if (row < M && k0 + threadIdx.x < K)
            sA[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
        else
            sA[threadIdx.y][threadIdx.x] = 0.f;
        if (k0 + threadIdx.y < K && col < N)
            sB[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
        else
            sB[threadIdx.y][threadIdx.x] = 0.f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) {
            sum = fmaf(sA[threadIdx.y][kk], sB[kk][threadIdx.x], sum);
        }
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = alpha * sum + beta * C[row * N + col];
}

extern "C" __global__ void sgemm_tpl(int M, int N, int K, float alpha, const float* __restrict__ A,
                                     const float* __restrict__ B, float beta,
                                     float* __restrict__ C)
{
    sgemm_tile_body<16>(M, N, K, alpha, A, B, beta, C);
}
