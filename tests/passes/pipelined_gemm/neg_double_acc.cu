// RUN: kltrans opt -p 'pipelined-gemm' --assume 'no_alias(*)'
// CHECK-SKIP: float-operands: the accumulator is double
// A double accumulator: the float micro-tile would lose precision.
// kltrans: launch gemm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void gemm(int M, int N, int K, float alpha, const float* A,
                                const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        double acc = 0.0;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
