// RUN: kltrans opt -p 'cap-blocks{max_blocks=4}'
// CHECK-SKIP: one-per-item: covers elements by blocks of threads
// The launch gives a block to every 64 rows, not a block per row: the guard on the block
// index leaves most rows out, and nothing says which items a block has.
// kltrans: launch row_copy grid=ceil_div(rows, 64) block=64
__global__ void row_copy(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x;
    if (row < rows) {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[(size_t)row * cols + c] = x[(size_t)row * cols + c];
    }
}
