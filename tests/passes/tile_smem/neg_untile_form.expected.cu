// RUN: kltrans opt -p 'untile-smem'
// CHECK-SKIP: tiled-form: is not a tile load
// Hand-tiled with if/else loads instead of the guarded conditional tile-smem writes.
// kltrans: launch mmt grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mmt(int M, int N, int K, const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        if (row < M && k0 + threadIdx.x < K) As[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
        else As[threadIdx.y][threadIdx.x] = 0.0f;
        if (k0 + threadIdx.y < K && col < N) Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
        else Bs[threadIdx.y][threadIdx.x] = 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
