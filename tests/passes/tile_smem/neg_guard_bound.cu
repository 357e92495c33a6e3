// RUN: kltrans opt -p 'tile-smem'
// CHECK-SKIP: guard-form: threads would disagree on the number of barriers
// A lower-triangular product: the k loop stops at the thread's own row, so threads of a
// block run different numbers of tile steps, and a barrier inside would deadlock.
// kltrans: launch trmm grid=(ceil_div(n, 16), ceil_div(n, 16)) block=(16, 16)
extern "C" __global__ void trmm(int n, const float* L, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < row + 1; ++k)
            acc += L[row * n + k] * B[k * n + col];
        C[row * n + col] = acc;
    }
}
