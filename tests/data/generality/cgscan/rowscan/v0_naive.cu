// kltrans: launch row_scan grid=ceil_div(rows, 128) block=128
__global__ void row_scan(const float* x, float* y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            s += x[(size_t)r * cols + c];
            y[(size_t)r * cols + c] = s;
        }
    }
}
