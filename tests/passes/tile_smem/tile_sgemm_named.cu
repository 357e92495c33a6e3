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
    if (row < M && col < N) {
        for (int e = 0; e < K; e += 1) {
            value += A[row * K + e] * B[e * N + col];
        }
        C[row * N + col] = alpha * value + beta * C[row * N + col];
    }
}
