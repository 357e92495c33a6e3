// RUN: kltrans opt -p 'tile-smem{tile=8}'
// GATE: corpus/sgemm
// Named thread and block indices (tx, ty, bx, by), a constexpr block edge, the product
// summed with +=, and the accumulator declared before the guard: 8 x 8 tiles.
// kltrans: launch sgemm_named grid=(ceil_div(N, 8), ceil_div(M, 8)) block=(8, 8)
constexpr int BS = 8;

extern "C" __global__ void sgemm_named(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    int tx = threadIdx.x, ty = threadIdx.y;
    int bx = blockIdx.x, by = blockIdx.y;
    int row = by * BS + ty;
    int col = bx * BS + tx;
    float value = 0;
    __shared__ float As[8][8];
    __shared__ float Bs[8][8];
    for (int k0 = 0; k0 < K; k0 += 8) {
        As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[row * K + (k0 + threadIdx.x)] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int e = 0; e < 8; e += 1) {
            value += As[threadIdx.y][e] * Bs[e][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = alpha * value + beta * C[row * N + col];
    }
}
