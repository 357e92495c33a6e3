// RUN: kltrans opt -p 'single-buffer'
// CHECK-SKIP: staged-storage: leading dimension is [4]
// Bs has four stages declared for a two-stage pipeline: removing one dimension would not
// give back the single-buffer array.
// kltrans: launch sgemm_tiled grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define TILE 16

extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float As[2][TILE][TILE];
    __shared__ float Bs[4][TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    int ntiles = (K + TILE - 1) / TILE;
    auto load_tile = [&](int t, int stage) {
        int ka = t * TILE + tx;
        int kb = t * TILE + ty;
        As[stage][ty][tx] = (row < M && ka < K) ? A[(size_t)row * K + ka] : 0.0f;
        Bs[stage][ty][tx] = (kb < K && col < N) ? B[(size_t)kb * N + col] : 0.0f;
    };
    if (0 < ntiles) load_tile(0, 0);
    __syncthreads();
    for (int t = 0; t < ntiles; ++t) {
        if (t + 1 < ntiles) load_tile(t + 1, (t + 1) & 1);
        for (int k = 0; k < TILE; ++k)
            acc += As[t & 1][ty][k] * Bs[t & 1][k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
