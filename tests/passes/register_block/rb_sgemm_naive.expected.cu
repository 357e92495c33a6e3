// RUN: kltrans opt -p 'register-block{tm=4,tn=4}'
// GATE: corpus/sgemm
// The corpus's naive sgemm (one thread per element of C, operands from global memory):
// each thread now computes a 4 x 4 tile of C, rows blockDim.y apart and columns blockDim.x
// apart (layout=strided), the bound check moved into the fragment loads and the store;
// the grid is divided by 4 in x and y.
// kltrans: launch sgemm_naive grid=(ceil_div(ceil_div(N, 16), 4), ceil_div(ceil_div(M, 16), 4)) block=(16, 16)
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    int row = blockIdx.y * blockDim.y * 4 + threadIdx.y;
    float acc[4][4];
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            acc[i][j] = 0.0f;
    for (int k = 0; k < K; ++k) {
        float a[4], b[4];
        #pragma unroll
        for (int i = 0; i < 4; ++i)
            a[i] = row + i * blockDim.y < M ? A[(size_t)(row + i * blockDim.y) * K + k] : 0.0f;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            b[j] = col + j * blockDim.x < N ? B[(size_t)k * N + (col + j * blockDim.x)] : 0.0f;
        #pragma unroll
        for (int i = 0; i < 4; ++i)
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                acc[i][j] += a[i] * b[j];
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            if (row + i * blockDim.y < M && col + j * blockDim.x < N) {
                size_t idx = (size_t)(row + i * blockDim.y) * N + (col + j * blockDim.x);
                C[idx] = alpha * acc[i][j] + beta * C[idx];
            }
}
