// RUN: kltrans opt -p 'untile-smem'
// CHECK-SKIP: shared-private: the tile loop reads As other than as
// The loop over the tile is unrolled by two: it reads As[threadIdx.y][k + 1], which the
// k loop of the untiled kernel cannot express.
// kltrans: launch mmt grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mmt(int M, int N, int K, const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[row * K + (k0 + threadIdx.x)] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; k += 2)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x] + As[threadIdx.y][k + 1] * Bs[k + 1][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
