// RUN: kltrans opt -p 'swizzle-blocks{group=GROUP_M,first=row0,local=pid}'
// GATE: corpus/sgemm
// A shared-memory tiled GEMM (the column block declared first, #define tile sizes),
// the group size a macro of the file.
#define TILE 16
#define GROUP_M 4
// kltrans: launch sgemm_tiled grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void sgemm_tiled(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int gx = gridDim.x, gy = gridDim.y;
    const int id = blockIdx.y * gx + blockIdx.x;
    const int group = id / (GROUP_M * gx);
    const int row0 = group * GROUP_M;
    const int rows = min(GROUP_M, gy - row0);
    const int pid = id - group * GROUP_M * gx;
    const int bx = (pid / rows) * TILE;
    const int by = (row0 + pid % rows) * TILE;
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (by + ty < M && k0 + tx < K) ? A[(size_t)(by + ty) * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && bx + tx < N) ? B[(size_t)(k0 + ty) * N + bx + tx] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (by + ty < M && bx + tx < N) {
        float* p = C + (size_t)(by + ty) * N + bx + tx;
        *p = alpha * acc + beta * *p;
    }
}
