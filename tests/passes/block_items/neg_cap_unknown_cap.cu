// RUN: kltrans opt -p 'cap-blocks{max_blocks=MAX_BLOCKS}'
// CHECK-SKIP: known-cap: MAX_BLOCKS is not an integer constant of the file
// The cap is named by a constant the file does not define.
// kltrans: launch row_copy grid=rows block=64
__global__ void row_copy(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x;
    if (row < rows) {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[(size_t)row * cols + c] = x[(size_t)row * cols + c];
    }
}
