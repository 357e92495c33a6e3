// RUN: kltrans opt -p 'unregister-block'
// GATE: corpus/sgemm
// The shape register-block{tm=8,tn=2} makes of the corpus's naive sgemm: an 8 x 2 micro-tile
// per thread, rows blockDim.y apart. Back to one element of C per thread, the bound check
// around the whole body again, the grid multiplied back.
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
