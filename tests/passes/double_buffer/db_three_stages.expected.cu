// RUN: kltrans opt -p 'double-buffer{stages=3}'
// GATE: corpus/sgemm
// Three stages: the prologue loads tiles 0 and 1, each iteration loads two tiles ahead.
// (a while loop, CEIL_DIV and BLOCK macros, a named tid index).
// kltrans: launch sgemm_three grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define BLOCK 16
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void sgemm_three(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float tileA[3][BLOCK * BLOCK];
    __shared__ float tileB[3][BLOCK * BLOCK];
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
    if (1 < tiles) load_tile(1, 1);
    __syncthreads();
    while (t < tiles) {
        if (t + 2 < tiles) load_tile(t + 2, (t + 2) % 3);
        for (int k = 0; k < BLOCK; k++)
            acc += tileA[t % 3][threadIdx.y * BLOCK + k] * tileB[t % 3][k * BLOCK + threadIdx.x];
        __syncthreads();
        t++;
    }
    if (gy < M && gx < N)
        C[gy * N + gx] = alpha * acc + beta * C[gy * N + gx];
}
