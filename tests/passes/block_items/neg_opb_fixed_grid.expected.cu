// RUN: kltrans opt -p one-per-block
// CHECK-SKIP: covering-grid: a fixed number of blocks
// A fixed grid of 132 blocks: nothing says how many rows there are per block, so no grid
// is known to give every row its own block.
// kltrans: launch row_copy grid=132 block=64
__global__ void row_copy(const float* x, float* y, int rows, int cols)
{
    for (int row = blockIdx.x; row < rows; row += gridDim.x)
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[(size_t)row * cols + c] = x[(size_t)row * cols + c];
}
