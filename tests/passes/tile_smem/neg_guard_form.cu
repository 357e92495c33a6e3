// RUN: kltrans opt -p 'tile-smem'
// CHECK-SKIP: guard-form: a return before the loop
// The bounds are an early exit: threads past the edge return before the loop, so they would
// never reach the tile's barriers (and would not load their share of the tiles).
// kltrans: launch mm_early grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm_early(int M, int N, int K, const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}
