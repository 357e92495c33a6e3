// RUN: kltrans opt -p 'register-block{tm=4,tn=2}'
// GATE: corpus/sgemm
// The classic shared-memory tiled sgemm (TILE x TILE tiles of A and B, one element of C
// per thread). The block's 16 x 16 tile of C stays; the block shrinks to 8 x 4 threads,
// each loading 4 x 2 elements of each shared tile and computing a 4 x 2 micro-tile from
// register fragments. The grid is unchanged.
// kltrans: launch sgemm_tiled grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define TILE 16

extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
