// RUN: kltrans opt -p 'cap-blocks{max_blocks=4}'
// CHECK-SKIP: same-results: race on shared part
// Every thread sums the block's partials after the barrier, and nothing follows: with a
// block per row that is the end. A block that goes on to its next row stores a new
// partial while slower threads still sum the old ones (no barrier between the turns).
// kltrans: launch row_sum grid=rows block=64
__global__ void row_sum(const float* x, float* y, int rows, int cols)
{
    __shared__ float part[64];
    int row = blockIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            s += x[(size_t)row * cols + c];
        part[threadIdx.x] = s;
        __syncthreads();
        float t = 0.0f;
        for (int k = 0; k < 64; k++)
            t += part[k];
        if (threadIdx.x == 0)
            y[row] = t;
    }
}
