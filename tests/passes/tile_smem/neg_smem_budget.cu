// RUN: kltrans opt -p 'tile-smem{tile=32}'
// CHECK-SKIP: smem-budget: over the 49152 bytes a block may declare
// The kernel already stages a 33 KB table of column scales in shared memory: two more
// 32 x 32 double tiles (16 KiB) exceed the 48 KiB of static shared memory.
// kltrans: launch dgemm_scaled grid=(ceil_div(N, 32), ceil_div(M, 32)) block=(32, 32)
extern "C" __global__ void dgemm_scaled(int M, int N, int K, const double* A, const double* B,
                                        const double* scale, double* C)
{
    __shared__ double s_scale[4200];
    for (int i = threadIdx.y * 32 + threadIdx.x; i < 4200; i += 1024)
        s_scale[i] = i < N ? scale[i] : 0.0;
    __syncthreads();
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        double acc = 0.0;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc * (col < 4200 ? s_scale[col] : scale[col]);
    }
}
