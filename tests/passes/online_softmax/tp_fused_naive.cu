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
