// RUN: kltrans opt -p 'double-buffer'
// GATE: corpus/sgemm
// A while loop over the tiles with CEIL_DIV and BLOCK macros and a named gid-style index;
// each thread loads one element of each 16x16 tile.
// kltrans: launch sgemm_while grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define BLOCK 16
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void sgemm_while(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float tileA[2][BLOCK * BLOCK];
    __shared__ float tileB[2][BLOCK * BLOCK];
    const int tid = threadIdx.y * BLOCK + threadIdx.x;
    const int gx = blockIdx.x * blockDim.x + threadIdx.x;
    const int gy = blockIdx.y * blockDim.y + threadIdx.y;
    const int tiles = CEIL_DIV(K, BLOCK);
    float acc = 0.0f;
    int t = 0;
    auto load_tile = [&](int t, int stage) {
        const int a_col = t * BLOCK + threadIdx.x;
        const int b_row = t * BLOCK + threadIdx.y;
        tileA[stage][tid] = (gy < M && a_col < K) ? A[gy * K + a_col] : 0.0f;
        tileB[stage][tid] = (b_row < K && gx < N) ? B[b_row * N + gx] : 0.0f;
    };
    if (0 < tiles) load_tile(0, 0);
    __syncthreads();
    while (t < tiles) {
        if (t + 1 < tiles) load_tile(t + 1, (t + 1) & 1);
        for (int k = 0; k < BLOCK; k++)
            acc += tileA[t & 1][threadIdx.y * BLOCK + k] * tileB[t & 1][k * BLOCK + threadIdx.x];
        __syncthreads();
        t++;
    }
    if (gy < M && gx < N)
        C[gy * N + gx] = alpha * acc + beta * C[gy * N + gx];
}
