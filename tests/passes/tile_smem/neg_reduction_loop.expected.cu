// RUN: kltrans opt -p 'tile-smem'
// CHECK-SKIP: reduction-loop: the loop body writes memory
// The product is accumulated straight into C inside the loop: after tiling, threads outside
// the matrix run the loop too, and their stores would land outside C.
// kltrans: launch mm_inplace grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm_inplace(int M, int N, int K, const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        C[row * N + col] = 0.0f;
        for (int k = 0; k < K; ++k)
            C[row * N + col] += A[row * K + k] * B[k * N + col];
    }
}
