// Wrong for large inputs: a softmax that does not subtract the row maximum. Right on
// inputs in [-4, 4]; the workload's inputs also get a run shifted by 1000 (`shift`), where
// exp overflows to infinity and the row becomes NaN.
// expect: the run with shifted inputs
// kltrans: launch softmax_rows grid=ceil_div(rows, 256) block=256
__global__ void softmax_rows(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* in = src + (size_t)r * cols;
    float* out = dst + (size_t)r * cols;
    float total = 0.0f;
    for (int k = 0; k < cols; k++)
        total += expf(in[k]);
    for (int k = 0; k < cols; k++)
        out[k] = expf(in[k]) / total;
}
