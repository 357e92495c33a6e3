// RUN: kltrans opt -p 'untile-smem'
// An int matrix product tiled by hand in the same shape, with its own names (tiles sA and
// sB, step counter t0, 8 x 8 tiles): untiled back to the guarded k loop.
// kltrans: launch imatmul grid=(ceil_div(n, 8), ceil_div(m, 8)) block=(8, 8)
extern "C" __global__ void imatmul(const int* a, const int* b, int* c, int m, int n, int p)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        int dot = 0;
        for (int q = 0; q < p; ++q)
            dot += a[row * p + q] * b[q * n + col];
        c[row * n + col] = dot;
    }
}
