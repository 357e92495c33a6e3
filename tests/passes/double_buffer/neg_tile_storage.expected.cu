// RUN: kltrans opt -p 'double-buffer'
// CHECK-SKIP: tile-storage: is used outside the tile loop
// As is read after the loop (the last tile): with two stages that would depend on which
// stage held the last tile.
// kltrans: launch sgemm_tiled grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define TILE 16

extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    int ntiles = (K + TILE - 1) / TILE;
    for (int t = 0; t < ntiles; ++t) {
        int ka = t * TILE + tx;
        int kb = t * TILE + ty;
        As[ty][tx] = (row < M && ka < K) ? A[(size_t)row * K + ka] : 0.0f;
        Bs[ty][tx] = (kb < K && col < N) ? B[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    acc += 0.0f * As[ty][tx];
    if (row < M && col < N) {
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
