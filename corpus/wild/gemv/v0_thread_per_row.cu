// kltrans: launch gemv_naive grid=ceil_div(rows, BLOCK_THREADS) block=BLOCK_THREADS
// gemv, version 0: y = A * x with one thread per row of A. Each thread runs down its own
// row, so neighbouring threads touch addresses cols floats apart (no coalescing).

typedef float real_t;

#define BLOCK_THREADS 256

__global__ void gemv_naive(const real_t *A, const real_t *x, real_t *y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows)
    {
        real_t acc = 0;
        for (int col = 0; col < cols; ++col)
            acc += A[(size_t)row * cols + col] * x[col];
        y[row] = acc;
    }
}
