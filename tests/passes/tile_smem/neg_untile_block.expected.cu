// RUN: kltrans opt -p 'untile-smem'
// CHECK-SKIP: block-shape: the tiles are 16 x 16 but the block is 32 x 32
// The tiles are 16 x 16 but 32 x 32 threads run: threads with threadIdx.x >= 16 write
// outside the tiles; this is not the tiled form of a k loop.
// kltrans: launch mmt grid=(ceil_div(N, 32), ceil_div(M, 32)) block=(32, 32)
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
        for (int k = 0; k < 16; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
