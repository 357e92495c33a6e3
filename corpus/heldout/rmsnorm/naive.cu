// kltrans: launch rmsnorm_naive grid=ceil_div(rows, 256) block=256
// rmsnorm naive: y[r, c] = x[r, c] / sqrt(sum_c x[r, c]^2 / cols + eps) * weight[c],
// rows x cols float32 (row-major), float32 statistics. One thread per row, two scalar
// passes (sum of squares, normalise).
extern "C" __global__ void rmsnorm_naive(const float* x, const float* weight, float* y, int rows,
                                         int cols, float eps)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += xr[c] * xr[c];
    }
    float inv = 1.0f / sqrtf(s / cols + eps);
    for (int c = 0; c < cols; ++c) {
        yr[c] = xr[c] * inv * weight[c];
    }
}
