// kltrans: launch column_sum_naive grid=ceil_div(cols, 256) block=256
// column_sum naive: y[c] = sum over r of x[r, c], rows x cols float32 (row-major),
// float32 accumulation. One thread per column, one scalar pass down the column.
extern "C" __global__ void column_sum_naive(const float* x, float* y, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) {
        return;
    }
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) {
        s += x[(size_t)r * cols + col];
    }
    y[col] = s;
}
