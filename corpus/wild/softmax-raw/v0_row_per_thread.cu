// kltrans: launch softmax_row_per_thread grid=ceil_div(rows, 256) block=256
// Row softmax, first cut: each thread owns a whole row and walks it three times,
// once for the maximum, once for the sum of exp(x - max), once to write the output.

__global__ void softmax_row_per_thread(const float* x, float* y, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;

    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    float row_max = -INFINITY;
    for (int c = 0; c < cols; c++) {
        row_max = fmaxf(row_max, in[c]);
    }

    float row_sum = 0.0f;
    for (int c = 0; c < cols; c++) {
        row_sum += expf(in[c] - row_max);
    }

    for (int c = 0; c < cols; c++) {
        out[c] = expf(in[c] - row_max) / row_sum;
    }
}
