// RUN: kltrans opt -p 'tile-smem'
// CHECK-SKIP: reuse: moves by M per k, not 1
// A is stored column-major (C = A^T-layout times B): a row of the A tile would be a strided,
// uncoalesced load; this pass tiles the row-major layout only.
// kltrans: launch mm_at grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm_at(int M, int N, int K, const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[k * M + row] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
