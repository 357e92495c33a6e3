// RUN: kltrans opt -p 'share-row{group=block}' --assume reassoc
// A thread per row whose row pointers are moved by the global index written out again
// (not through the row variable): a block per row moves them by the block's row too.
// kltrans: launch row_scale grid=ceil_div(rows, 128) block=128
__global__ void row_scale(const float* x, float* y, int rows, int cols)
{
    x += (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * cols;
    y += (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * cols;
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c += 1)
            s += x[c] * x[c];
        float k = rsqrtf(s / cols + 1e-6f);
        for (int c = 0; c < cols; c += 1)
            y[c] = x[c] * k;
    }
}
