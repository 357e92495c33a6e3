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
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        for (int k = 0; k < TILE; ++k)
            acc += ((row < M && t * TILE + k < K) ? A[row * K + t * TILE + k] : 0.0f) * ((t * TILE + k < K && col < N) ? B[(t * TILE + k) * N + col] : 0.0f);
    }
    if (row < M && col < N)
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
