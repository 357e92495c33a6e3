// RUN: kltrans opt -p 'row-per-warp{group=cols,threads=64,width=512}'
// A non-const row index, an exit without braces, a per-row read and a `j += 1` map.
// kltrans: launch copy_rows grid=ceil_div(rows, 64) block=64
// A row copy with a per-row bias; the row index is the global thread index.
extern "C" __global__ void copy_rows(const float* x, float* y, const float* bias, int rows,
                                     int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    bool inside = row < rows;
    if (!inside) return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const float b = bias[row];
    for (int j = 0; j < cols; j += 1) {
        yr[j] = xr[j] + b;
    }
}
