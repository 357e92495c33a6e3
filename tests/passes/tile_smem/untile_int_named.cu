// RUN: kltrans opt -p 'untile-smem'
// An int matrix product tiled by hand in the same shape, with its own names (tiles sA and
// sB, step counter t0, 8 x 8 tiles): untiled back to the guarded k loop.
// kltrans: launch imatmul grid=(ceil_div(n, 8), ceil_div(m, 8)) block=(8, 8)
extern "C" __global__ void imatmul(const int* a, const int* b, int* c, int m, int n, int p)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ int sA[8][8];
    __shared__ int sB[8][8];
    int dot = 0;
    for (int t0 = 0; t0 < p; t0 += 8) {
        sA[threadIdx.y][threadIdx.x] = (row < m && t0 + threadIdx.x < p) ? a[row * p + (t0 + threadIdx.x)] : 0;
        sB[threadIdx.y][threadIdx.x] = (t0 + threadIdx.y < p && col < n) ? b[(t0 + threadIdx.y) * n + col] : 0;
        __syncthreads();
        for (int q = 0; q < 8; ++q)
            dot += sA[threadIdx.y][q] * sB[q][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * n + col] = dot;
    }
}
