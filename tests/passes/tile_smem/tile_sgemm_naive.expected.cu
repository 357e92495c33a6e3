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
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[(size_t)row * K + (k0 + threadIdx.x)] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? B[(size_t)(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; ++k) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        size_t idx = (size_t)row * N + col;
        C[idx] = alpha * acc + beta * C[idx];
    }
}
