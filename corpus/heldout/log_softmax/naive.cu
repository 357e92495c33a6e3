// kltrans: launch log_softmax_naive grid=ceil_div(rows, 256) block=256
// log_softmax naive: y[r, c] = x[r, c] - m - log(sum_c exp(x[r, c] - m)), m the row
// maximum, rows x cols float32 (row-major). One thread per row, three scalar passes
// (max, sum of exp, write).
extern "C" __global__ void log_softmax_naive(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) {
        m = fmaxf(m, xr[c]);
    }
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += expf(xr[c] - m);
    }
    float lse = m + logf(s);
    for (int c = 0; c < cols; ++c) {
        yr[c] = xr[c] - lse;
    }
}
