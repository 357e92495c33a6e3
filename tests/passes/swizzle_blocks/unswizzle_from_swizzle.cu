// RUN: kltrans opt -p unswizzle-blocks
// The output of swizzle-blocks{group=4} on swizzle_naive_sgemm.cu (canonical spelling).
// GATE: corpus/sgemm
// One thread per element of C.
// kltrans: launch sgemm_naive grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    const int gx = gridDim.x, gy = gridDim.y;
    const int id = blockIdx.y * gx + blockIdx.x;
    const int group = id / (4 * gx);
    const int first_row = group * 4;
    const int rows = min(4, gy - first_row);
    const int local = id - group * 4 * gx;
    int row = (first_row + local % rows) * blockDim.y + threadIdx.y;
    int col = (local / rows) * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
