// RUN: kltrans opt -p one-per-block
// CHECK-SKIP: block-loop: is read after the loop
// The loop also counts the rows its block took, and the count is read after the loop:
// without the loop's moves it would change.
// kltrans: launch row_copy grid=min(rows, 4) block=64
__global__ void row_copy(const float* x, float* y, int rows, int cols)
{
    int taken = 0;
    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[(size_t)row * cols + c] = x[(size_t)row * cols + c];
        taken += 1;
    }
    if (threadIdx.x == 0 && taken == 0 && rows > 0)
        y[0] = 0.0f;
}
