// RUN: kltrans opt -p 'two-pass-softmax' --assume reassoc
// GATE: corpus/softmax
// The loop online-softmax writes for corpus/softmax/naive.cu, split back into the max
// loop and the sum loop; float s = 0.0f (between=1) goes between them.
// kltrans: launch softmax_naive grid=ceil_div(rows, 256) block=256
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
