// RUN: kltrans opt -p unshare-row --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: none: share-row folds with butterflies and slots, not a shared-memory tree
// A block per row with a shared-memory tree whose result every thread reads back from
// buf[0] (a barrier before the buffer is reused): one thread per row, a guard added.
// kltrans: launch softmax_tree grid=ceil_div(rows, 128) block=128
__global__ void softmax_tree(const float* src, float* dst, int rows, int cols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* in = src + (size_t)row * cols;
    float* out = dst + (size_t)row * cols;
    float hi = -INFINITY;
    for (int k = 0; k < cols; k += 1)
        hi = fmaxf(hi, in[k]);
    float s = 0.0f;
    for (int k = 0; k < cols; k += 1)
        s += expf(in[k] - hi);
    for (int k = 0; k < cols; k += 1)
        out[k] = expf(in[k] - hi) / s;
}
