// kltrans: launch residual_add_rmsnorm_naive grid=ceil_div(rows, 256) block=256
// residual_add_rmsnorm naive: h = x + residual (written out), then
// y[r, c] = h[r, c] / sqrt(sum_c h[r, c]^2 / cols + eps) * weight[c], rows x cols float32
// (row-major), float32 statistics. One thread per row, two scalar passes (add and sum
// of squares, normalise reading h back).
extern "C" __global__ void residual_add_rmsnorm_naive(const float* x, const float* residual,
                                                      const float* weight, float* h, float* y,
                                                      int rows, int cols, float eps)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    size_t base = (size_t)row * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        float v = x[base + c] + residual[base + c];
        h[base + c] = v;
        s += v * v;
    }
    float inv = 1.0f / sqrtf(s / cols + eps);
    for (int c = 0; c < cols; ++c) {
        y[base + c] = h[base + c] * inv * weight[c];
    }
}
