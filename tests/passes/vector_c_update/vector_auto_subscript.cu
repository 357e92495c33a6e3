// RUN: kltrans opt -p vector-c-update
// GATE: corpus/sgemm
// A 1x4 register strip, the row pointer indexed with subscripts, `j++` and no braces:
// guard=auto tests the bound and the alignment at run time.
// kltrans: launch sgemm_1x4 grid=(ceil_div(N, 64), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void sgemm_1x4(int M, int N, int K, float alpha, const float* A,
                                     const float* B, float beta, float* C)
{
    int row = threadIdx.y + blockDim.y * blockIdx.y;
    int col = 4 * (threadIdx.x + blockDim.x * blockIdx.x);
    if (row < M) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int k = 0; k < K; k++) {
            float a = A[(size_t)row * K + k];
            for (int j = 0; j < 4; j++)
                if (col + j < N) acc[j] += a * B[(size_t)k * N + col + j];
        }
        float* crow = C + (size_t)row * N;
        for (int j = 0; j < 4; j++)
            if (col + j < N) crow[col + j] = alpha * acc[j] + beta * crow[col + j];
    }
}
