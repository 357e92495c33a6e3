// kltrans: launch row_max_naive grid=ceil_div(rows, 256) block=256
// row_max naive: y[r] = max over c of x[r, c], rows x cols float32 (row-major).
// One thread per row, one scalar pass over the row.
extern "C" __global__ void row_max_naive(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) {
        m = fmaxf(m, xr[c]);
    }
    y[row] = m;
}
