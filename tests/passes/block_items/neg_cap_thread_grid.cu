// RUN: kltrans opt -p 'cap-blocks{max_blocks=ROW_BLOCKS}'
// CHECK-SKIP: one-per-item: covers elements by blocks of threads
// The launch gives a block to every 128 rows, not a block per row (the guard on the block
// index would leave most rows out; the grid does not say one item per block).
// kltrans: launch softmax_rows grid=ceil_div(rows, 128) block=128
#define ROW_BLOCKS 4

__global__ void softmax_rows(const float* x, float* y, int rows, int cols)
{
    __shared__ float red[128];
    x += (size_t)blockIdx.x * cols;
    y += (size_t)blockIdx.x * cols;
    int row = blockIdx.x;
    if (row < rows) {
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
    }
}
