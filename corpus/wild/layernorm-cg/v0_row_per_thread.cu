// kltrans: launch layernorm_forward grid=ceil_div(rows, 256) block=256
// LayerNorm, first version: every thread owns one whole row. It walks the row once for
// the mean, once more for the (biased) variance around that mean, and a third time to
// write the normalised, scaled and shifted values.

constexpr float kEps = 1e-5f;

__global__ void layernorm_forward(const float* x, const float* gamma, const float* beta,
                                  float* y, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;

    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    float sum = 0.0f;
    for (int c = 0; c < cols; c++) {
        sum += in[c];
    }
    float mean = sum / cols;

    float sq = 0.0f;
    for (int c = 0; c < cols; c++) {
        float d = in[c] - mean;
        sq += d * d;
    }
    float rstd = 1.0f / sqrtf(sq / cols + kEps);

    for (int c = 0; c < cols; c++) {
        out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
