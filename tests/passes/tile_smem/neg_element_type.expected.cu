// RUN: kltrans opt -p 'tile-smem'
// CHECK-SKIP: element-type: A points to short
// 16-bit integer matrices: the pass writes float, double and int tiles only.
// kltrans: launch mm_s16 grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm_s16(int M, int N, int K, const short* A, const short* B, int* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        int acc = 0;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
