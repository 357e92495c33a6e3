// RUN: kltrans opt -p 'row-per-thread' --assume reassoc
// GATE: corpus/softmax
// The output of row-per-warp on corpus/softmax/naive.cu: back to one thread per row.
// kltrans: launch softmax_naive grid=ceil_div(rows, 256) block=256
// softmax naive: row-wise softmax of a rows x cols float32 matrix (row-major),
// y[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r).
// One thread per row, three scalar passes over the row (max, sum of exp, normalise).
// launch: grid = ceil(rows/256), block = 256
extern "C" __global__ void softmax_naive(const float* x, float* y, int rows, int cols)
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

    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) / s;
    }
}
