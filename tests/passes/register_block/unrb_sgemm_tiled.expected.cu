// RUN: kltrans opt -p 'unregister-block'
// GATE: corpus/sgemm
// A hand-written 32 x 32 tiled sgemm with a 4 x 4 register micro-tile per thread, 8 x 8
// threads, each thread's rows and columns adjacent (ty, tx scaled by 4), pragmas at
// column 0. Back to one output and one tile element per thread: block (32, 32).
// kltrans: launch sgemm_micro grid=(ceil_div(N, 32), ceil_div(M, 32)) block=(32, 32)
#define BT 32

extern "C" __global__ void sgemm_micro(int M, int N, int K, float alpha,
                                       const float* __restrict__ A,
                                       const float* __restrict__ B, float beta,
                                       float* __restrict__ C)
{
    __shared__ float sA[BT][BT];
    __shared__ float sB[BT][BT];
    const int ty = threadIdx.y;
    const int tx = threadIdx.x;
    const int r0 = BT * blockIdx.y + ty;
    const int c0 = BT * blockIdx.x + tx;
    float c = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BT) {
        sA[ty][tx] = (r0 < M && k0 + tx < K) ? A[r0 * K + k0 + tx] : 0.0f;
        sB[ty][tx] = (k0 + ty < K && c0 < N) ? B[(k0 + ty) * N + c0] : 0.0f;
        __syncthreads();
#pragma unroll 8
        for (int kk = 0; kk < BT; ++kk) {
            c += sA[ty][kk] * sB[kk][tx];
        }
        __syncthreads();
    }
    if (r0 < M && c0 < N)
        C[r0 * N + c0] = alpha * c + beta * C[r0 * N + c0];
}
