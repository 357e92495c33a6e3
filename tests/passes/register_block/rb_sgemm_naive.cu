// RUN: kltrans opt -p 'register-block{tm=4,tn=4}'
// GATE: corpus/sgemm
// The corpus's naive sgemm (one thread per element of C, operands from global memory):
// each thread now computes a 4 x 4 tile of C, rows blockDim.y apart and columns blockDim.x
// apart (layout=strided), the bound check moved into the fragment loads and the store;
// the grid is divided by 4 in x and y.
// kltrans: launch sgemm_naive grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
