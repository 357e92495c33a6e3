// RUN: kltrans opt -p 'tile-smem{tile=32}'
// CHECK-SKIP: block-shape: tile=32 but the launch contract's block is 16 x 16
// The option asks for 32 x 32 tiles, but the kernel is launched with 16 x 16 threads.
// kltrans: launch mm16 grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm16(int M, int N, int K, const float* A, const float* B, float* C)
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
