// RUN: kltrans opt -p 'share-row{group=block}' --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: none: unshare-row restores the loops as k += 1, not k++
// A block per row: the loops stride by blockDim.x from threadIdx.x; each fold is a warp
// butterfly, a slot per warp in shared memory, a barrier, and every thread sums the slots.
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
