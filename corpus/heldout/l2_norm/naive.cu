// kltrans: launch l2_norm_naive grid=ceil_div(rows, 256) block=256
// l2_norm naive: y[r] = sqrt(sum over c of x[r, c]^2), rows x cols float32 (row-major),
// float32 accumulation. One thread per row, one scalar pass over the row.
extern "C" __global__ void l2_norm_naive(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        float v = xr[c];
        s += v * v;
    }
    y[row] = sqrtf(s);
}
