// RUN: kltrans opt -p 'unregister-block'
// GATE: corpus/sgemm
// The shape register-block{tm=8,tn=2} makes of the corpus's naive sgemm: an 8 x 2 micro-tile
// per thread, rows blockDim.y apart. Back to one element of C per thread, the bound check
// around the whole body again, the grid multiplied back.
// kltrans: launch sgemm_naive grid=(ceil_div(ceil_div(N, 16), 2), ceil_div(ceil_div(M, 16), 8)) block=(16, 16)
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    int row = blockIdx.y * blockDim.y * 8 + threadIdx.y;
    float acc[8][2];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 2; ++j)
            acc[i][j] = 0.0f;
    for (int k = 0; k < K; ++k) {
        float a[8], b[2];
        #pragma unroll
        for (int i = 0; i < 8; ++i)
            a[i] = row + i * blockDim.y < M ? A[(size_t)(row + i * blockDim.y) * K + k] : 0.0f;
        #pragma unroll
        for (int j = 0; j < 2; ++j)
            b[j] = col + j * blockDim.x < N ? B[(size_t)k * N + (col + j * blockDim.x)] : 0.0f;
        #pragma unroll
        for (int i = 0; i < 8; ++i)
            #pragma unroll
            for (int j = 0; j < 2; ++j)
                acc[i][j] += a[i] * b[j];
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 2; ++j)
            if (row + i * blockDim.y < M && col + j * blockDim.x < N) {
                size_t idx = (size_t)(row + i * blockDim.y) * N + (col + j * blockDim.x);
                C[idx] = alpha * acc[i][j] + beta * C[idx];
            }
}
