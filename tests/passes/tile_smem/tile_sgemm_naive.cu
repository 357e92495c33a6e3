// RUN: kltrans opt -p 'tile-smem{tile=16}'
// GATE: corpus/sgemm
// The corpus naive sgemm (size_t index casts, acc +=): 16 x 16 tiles of A and B in shared
// memory, the bounds guard turned into zero-filled loads and a guarded store.
// kltrans: launch sgemm_naive grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
// sgemm naive: C = alpha * A * B + beta * C, float32, row-major,
// A is M x K, B is K x N, C is M x N. One thread per element of C.
// launch: grid = (ceil(N/16), ceil(M/16)), block = (16, 16)
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
