// kltrans: launch argmax_naive grid=ceil_div(rows, 256) block=256
// argmax naive: idx[r] = first c with x[r, c] maximal, rows x cols float32 (row-major),
// int32 indices. One thread per row, one scalar pass; strict > keeps the first maximum.
extern "C" __global__ void argmax_naive(const float* x, int* idx, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float best = xr[0];
    int arg = 0;
    for (int c = 1; c < cols; ++c) {
        float v = xr[c];
        if (v > best) {
            best = v;
            arg = c;
        }
    }
    idx[row] = arg;
}
