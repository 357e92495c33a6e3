// RUN: kltrans opt -p 'pipelined-gemm' --assume 'no_alias(*)'
// CHECK-SKIP: row-major: is not the row-major
// A is stored column-major (K x M): the copy map of the tiled form would read it wrongly.
// kltrans: launch gemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)k * M + row] * B[(size_t)k * N + col];
        }
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
