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
        if (col + 3 < N && (reinterpret_cast<unsigned long long>(&crow[col]) & 15ull) == 0) {
            float4* p4 = reinterpret_cast<float4*>(&crow[col]);
            float4 c = *p4;
            c.x = alpha * acc[0] + beta * c.x;
            c.y = alpha * acc[1] + beta * c.y;
            c.z = alpha * acc[2] + beta * c.z;
            c.w = alpha * acc[3] + beta * c.w;
            *p4 = c;
        } else {
            for (int j = 0; j < 4; j++)
                if (col + j < N) crow[col + j] = alpha * acc[j] + beta * crow[col + j];
        }
    }
}
