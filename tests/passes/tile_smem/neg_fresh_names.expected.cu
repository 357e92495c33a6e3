// RUN: kltrans opt -p 'tile-smem{a_tile=As,b_tile=Bs}'
// CHECK-SKIP: fresh-names: As is already used in mm_named
// The requested tile name As is a parameter of the kernel already.
// kltrans: launch mm_named grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
extern "C" __global__ void mm_named(int M, int N, int K, const float* As, const float* Bm, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += As[row * K + k] * Bm[k * N + col];
        C[row * N + col] = acc;
    }
}
