// kltrans: launch softmax_cross_entropy_backward_naive grid=ceil_div(rows, 256) block=256
// softmax_cross_entropy_backward naive: dlogits[r, c] = (softmax(logits[r])[c]
// - (c == target[r])) * dloss[r], rows x classes float32 (row-major), int32 targets.
// One thread per row, three scalar passes (max, sum of exp, write).
extern "C" __global__ void softmax_cross_entropy_backward_naive(const float* logits,
                                                                const int* target,
                                                                const float* dloss,
                                                                float* dlogits, int rows,
                                                                int classes)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    const float* z = logits + (size_t)row * classes;
    float* dz = dlogits + (size_t)row * classes;
    float m = -INFINITY;
    for (int c = 0; c < classes; ++c) {
        m = fmaxf(m, z[c]);
    }
    float s = 0.0f;
    for (int c = 0; c < classes; ++c) {
        s += expf(z[c] - m);
    }
    int t = target[row];
    float g = dloss[row];
    for (int c = 0; c < classes; ++c) {
        float p = expf(z[c] - m) / s;
        dz[c] = (c == t ? p - 1.0f : p) * g;
    }
}
