// RUN: kltrans opt -p 'shrink-block{threads=128}'
// Eight warps per block, each on its own row: four per block at 128 threads.
// kltrans: launch rowsum grid=ceil_div(rows, 4) block=128
__global__ void rowsum(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    float s = 0.0f;
    for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[row] = s;
}
