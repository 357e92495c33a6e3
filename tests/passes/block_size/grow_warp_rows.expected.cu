// RUN: kltrans opt -p 'grow-block{threads=256}'
// A warp per row: the grid covers rows * 32 threads, whatever the block.
// kltrans: launch rowsum grid=ceil_div(rows * 32, 256) block=256
__global__ void rowsum(const float* x, float* y, int rows, int cols)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (row >= rows) return;
    float s = 0.0f;
    for (int j = threadIdx.x & 31; j < cols; j += 32) s += x[row * cols + j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) y[row] = s;
}
