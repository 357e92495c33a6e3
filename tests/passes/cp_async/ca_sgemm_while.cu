// RUN: kltrans opt -p 'cp-async' --arch sm_80
// GATE: corpus/sgemm
// A while loop over the tiles, CEIL_DIV/BLOCK macros, 1-D tiles indexed by a named tid.
// kltrans: launch sgemm_while grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
#define BLOCK 16
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void sgemm_while(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float tileA[BLOCK * BLOCK];
    __shared__ float tileB[BLOCK * BLOCK];
    const int tid = threadIdx.y * BLOCK + threadIdx.x;
    const int gx = blockIdx.x * blockDim.x + threadIdx.x;
    const int gy = blockIdx.y * blockDim.y + threadIdx.y;
    const int tiles = CEIL_DIV(K, BLOCK);
    float acc = 0.0f;
    int t = 0;
    while (t < tiles) {
        const int a_col = t * BLOCK + threadIdx.x;
        const int b_row = t * BLOCK + threadIdx.y;
        tileA[tid] = (gy < M && a_col < K) ? A[gy * K + a_col] : 0.0f;
        tileB[tid] = (b_row < K && gx < N) ? B[b_row * N + gx] : 0.0f;
        __syncthreads();
        for (int k = 0; k < BLOCK; k++)
            acc += tileA[threadIdx.y * BLOCK + k] * tileB[k * BLOCK + threadIdx.x];
        __syncthreads();
        t++;
    }
    if (gy < M && gx < N)
        C[gy * N + gx] = alpha * acc + beta * C[gy * N + gx];
}
