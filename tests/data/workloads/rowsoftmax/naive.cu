// kltrans: launch softmax_rows grid=ceil_div(rows, 256) block=256
__global__ void softmax_rows(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* in = src + (size_t)r * cols;
    float* out = dst + (size_t)r * cols;
    float m = -INFINITY;
    for (int k = 0; k < cols; k++)
        m = fmaxf(m, in[k]);
    float total = 0.0f;
    for (int k = 0; k < cols; k++)
        total += expf(in[k] - m);
    for (int k = 0; k < cols; k++)
        out[k] = expf(in[k] - m) / total;
}
