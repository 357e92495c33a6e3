// RUN: kltrans opt -p 'tile-smem{tile=16}'
// CHECK-SKIP: block-shape: is not a square 2-D block T x T
// A 32 x 8 block: each thread loads one element of each tile, so a T x T tile needs a T x T
// block.
// kltrans: launch mm_rect grid=(ceil_div(N, 32), ceil_div(M, 8)) block=(32, 8)
extern "C" __global__ void mm_rect(int M, int N, int K, const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
