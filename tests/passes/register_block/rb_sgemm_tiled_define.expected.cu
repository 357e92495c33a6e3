// RUN: kltrans opt -p 'register-block{tm=4,tn=2}'
// GATE: corpus/sgemm
// The classic shared-memory tiled sgemm (TILE x TILE tiles of A and B, one element of C
// per thread). The block's 16 x 16 tile of C stays; the block shrinks to 8 x 4 threads,
// each loading 4 x 2 elements of each shared tile and computing a 4 x 2 micro-tile from
// register fragments. The grid is unchanged.
// kltrans: launch sgemm_tiled grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(8, 4)
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
    float acc[4][2];
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 2; ++j)
            acc[i][j] = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        #pragma unroll
        for (int i = 0; i < 4; ++i)
            #pragma unroll
            for (int j = 0; j < 2; ++j) {
                As[ty + i * blockDim.y][tx + j * blockDim.x] = (row + i * blockDim.y < M && t + (tx + j * blockDim.x) < K) ? A[(row + i * blockDim.y) * K + t + (tx + j * blockDim.x)] : 0.0f;
                Bs[ty + i * blockDim.y][tx + j * blockDim.x] = (t + (ty + i * blockDim.y) < K && col + j * blockDim.x < N) ? B[(t + (ty + i * blockDim.y)) * N + (col + j * blockDim.x)] : 0.0f;
            }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            float a[4], b[2];
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                a[i] = As[ty + i * blockDim.y][k];
            #pragma unroll
            for (int j = 0; j < 2; ++j)
                b[j] = Bs[k][tx + j * blockDim.x];
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                #pragma unroll
                for (int j = 0; j < 2; ++j)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 2; ++j)
            if (row + i * blockDim.y < M && col + j * blockDim.x < N)
                C[(row + i * blockDim.y) * N + (col + j * blockDim.x)] = alpha * acc[i][j] + beta * C[(row + i * blockDim.y) * N + (col + j * blockDim.x)];
}
