// RUN: kltrans opt -p 'row-per-warp{group=cols,threads=64,width=512}'
// A non-const row index, an exit without braces, a per-row read and a `j += 1` map.
// kltrans: launch copy_rows grid=ceil_div(rows, max(1, 2 / ceil_div(cols, 512))) block=64
// A row copy with a per-row bias; the row index is the global thread index.
extern "C" __global__ void copy_rows(const float* x, float* y, const float* bias, int rows,
                                     int cols)
{
    const int q = (cols + 511) / 512;
    const int rpb = q >= 1 && q <= 2 ? 2 / q : 1;  // rows per block
    const int G = 64 / rpb;  // threads per row
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    int row = blockIdx.x * rpb + group;
    bool inside = row < rows;
    if (!inside) return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const float b = bias[row];
    for (int j = gt; j < cols; j += G) {
        yr[j] = xr[j] + b;
    }
}
