// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// GATE: corpus/softmax
// kltrans: launch softmax_naive grid=(ceil_div(rows, 256) * 32) block=256
// softmax naive: row-wise softmax of a rows x cols float32 matrix (row-major),
// y[r, c] = exp(x[r, c] - max_r) / sum_c exp(x[r, c] - max_r).
// One thread per row, three scalar passes over the row (max, sum of exp, normalise).
// launch: grid = ceil(rows/256), block = 256
extern "C" __global__ void softmax_naive(const float* x, float* y, int rows, int cols)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;

    float m = -INFINITY;
    for (int c = lane; c < cols; c += 32) {
        m = fmaxf(m, xr[c]);
    }
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));

    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        s += expf(xr[c] - m);
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);

    for (int c = lane; c < cols; c += 32) {
        yr[c] = expf(xr[c] - m) / s;
    }
}
