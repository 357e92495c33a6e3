// RUN: kltrans opt -p 'share-row{group=block}' --assume reassoc
// A thread per row whose row pointers are moved by the global index written out again
// (not through the row variable): a block per row moves them by the block's row too.
// kltrans: launch row_scale grid=rows block=128
__global__ void row_scale(const float* x, float* y, int rows, int cols)
{
    __shared__ float slots[32];
    x += (size_t)blockIdx.x * cols;
    y += (size_t)blockIdx.x * cols;
    int row = blockIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            s += x[c] * x[c];
        for (int offset = 16; offset > 0; offset >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, offset);
        if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = s;
        __syncthreads();
        s = slots[0];
        for (int w = 1; w < (blockDim.x >> 5); ++w)
            s += slots[w];
        __syncthreads();
        float k = rsqrtf(s / cols + 1e-6f);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[c] = x[c] * k;
    }
}
