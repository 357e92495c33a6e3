// RUN: kltrans opt -p 'online-softmax' --assume reassoc
// GATE: corpus/softmax
// corpus/softmax/naive.cu: thread per row, the max loop and the sum loop fuse into one
// online pass (the row is read twice instead of three times); float s = 0.0f moves
// before the fused loop.
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
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        const float v = xr[c];
        const float mn = fmaxf(m, v);
        if (mn != -INFINITY) {
            s *= expf(m - mn);
            s += expf(v - mn);
        }
        m = mn;
    }

    for (int c = 0; c < cols; ++c) {
        yr[c] = expf(xr[c] - m) / s;
    }
}
