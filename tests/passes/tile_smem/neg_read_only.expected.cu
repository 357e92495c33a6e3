// RUN: kltrans opt -p 'tile-smem'
// CHECK-SKIP: read-only: A is written in the kernel
// The kernel also consumes its input: the thread of column 0 clears the first element of its
// row of A. A tile loaded once per step could hold a value another thread has changed.
// kltrans: launch mm_consume grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm_consume(int M, int N, int K, float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
        if (col == 0) A[row * K] = 0.0f;
    }
}
