// RUN: kltrans opt -p 'cap-blocks{max_blocks=ROW_BLOCKS}'
// A block per row, the row pointers moved to the block's row first: capped at ROW_BLOCKS
// blocks, each block loops over rows by the grid's blocks and moves the pointers on by
// gridDim.x rows at the end of every turn. The barrier after the last read of red[0]
// keeps a turn's first store to red from racing with it.
// kltrans: launch softmax_rows grid=min(rows, ROW_BLOCKS) block=128
#define ROW_BLOCKS 4

__global__ void softmax_rows(const float* x, float* y, int rows, int cols)
{
    __shared__ float red[128];
    x += (size_t)blockIdx.x * cols;
    y += (size_t)blockIdx.x * cols;
    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        float m = -INFINITY;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            m = fmaxf(m, x[c]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s)
                red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        float sum = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            sum += expf(x[c] - m);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s)
                red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        sum = red[0];
        __syncthreads();
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[c] = expf(x[c] - m) / sum;
        x += (size_t)gridDim.x * cols;
        y += (size_t)gridDim.x * cols;
    }
}
