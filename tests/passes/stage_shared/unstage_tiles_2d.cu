// RUN: kltrans opt -p unstage-shared
// GATE: corpus/sgemm
// ROUNDTRIP: none: stage-shared stages a 1-D stretch that a loop reads; these are 2-D tiles
// The textbook tiled matrix product: each block copies a TILE x TILE tile of A and of B
// (zero outside the matrices), synchronizes, and reads them in its k loop. Both tiles
// are read from A and B again, each element as the thread that copied it loaded it; with
// the last shared array gone, the barriers go too.
#define TILE 16
// kltrans: launch mm_tiled grid=(ceil_div(N, TILE), ceil_div(M, TILE)) block=(TILE, TILE)
__global__ void mm_tiled(int M, int N, int K, float alpha, const float* A, const float* B,
                         float beta, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        As[ty][tx] = (row < M && t * TILE + tx < K) ? A[row * K + t * TILE + tx] : 0.0f;
        Bs[ty][tx] = (t * TILE + ty < K && col < N) ? B[(t * TILE + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
