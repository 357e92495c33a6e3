// RUN: kltrans opt -p one-per-block
// CHECK-SKIP: block-loop: not a move of a variable
// The update clause calls a function after every turn: as a guard there is no place
// that runs it after the body.
// kltrans: launch row_copy grid=min(rows, 4) block=64
__device__ int turns;

__global__ void row_copy(const float* x, float* y, int rows, int cols)
{
    for (int row = blockIdx.x; row < rows; row += gridDim.x, atomicAdd(&turns, 1))
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[(size_t)row * cols + c] = x[(size_t)row * cols + c];
}
