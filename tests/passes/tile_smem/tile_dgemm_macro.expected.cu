// RUN: kltrans opt -p 'tile-smem{tile=16}'
// A double-precision C = A * B (no alpha/beta) with the block edge a macro, as in many
// tutorials: the tiles are spelled with BLOCK_SIZE, zero-filled with 0.0, and the
// square-matrix guard (row < n && col < n) splits into a row bound for A and a column
// bound for B.
// kltrans: launch dgemm grid=(ceil_div(n, BLOCK_SIZE), ceil_div(n, BLOCK_SIZE)) block=(BLOCK_SIZE, BLOCK_SIZE)
#define BLOCK_SIZE 16

extern "C" __global__ void dgemm(const double* a, const double* b, double* c, int n)
{
    int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    __shared__ double As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ double Bs[BLOCK_SIZE][BLOCK_SIZE];
    double tmp = 0.0;
    for (int k0 = 0; k0 < n; k0 += BLOCK_SIZE) {
        As[threadIdx.y][threadIdx.x] = (row < n && k0 + threadIdx.x < n) ? a[row * n + (k0 + threadIdx.x)] : 0.0;
        Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < n && col < n) ? b[(k0 + threadIdx.y) * n + col] : 0.0;
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            tmp += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        c[row * n + col] = tmp;
    }
}
