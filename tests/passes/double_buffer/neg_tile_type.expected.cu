// RUN: kltrans opt -p 'double-buffer'
// CHECK-SKIP: tile-type: has no known size
// The tile element type is a template parameter deduced at the call: its size (and so the
// doubled footprint) is not known from the source.
// kltrans: launch sgemm_tiled grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define TILE 16

template <typename T>
__device__ void sgemm_tiled_t(int M, int N, int K, T alpha, const T* A, const T* B, T beta,
                              T* C)
{
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    T acc = T(0);
    int ntiles = (K + TILE - 1) / TILE;
    for (int t = 0; t < ntiles; ++t) {
        int ka = t * TILE + tx;
        int kb = t * TILE + ty;
        As[ty][tx] = (row < M && ka < K) ? A[(size_t)row * K + ka] : T(0);
        Bs[ty][tx] = (kb < K && col < N) ? B[(size_t)kb * N + col] : T(0);
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}

extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    sgemm_tiled_t(M, N, K, alpha, A, B, beta, C);
}
