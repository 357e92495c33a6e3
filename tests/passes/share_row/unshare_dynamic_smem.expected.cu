// RUN: kltrans opt -p unshare-row --assume reassoc
// ROUNDTRIP: none: share-row folds with butterflies and static slots, not a tree in dynamic shared memory
// A block per row whose tree runs in dynamic shared memory (the launch reserves one
// float per thread): a thread per row declares no shared memory, so the launch reserves
// none either.
// kltrans: launch row_max grid=ceil_div(rows, 64) block=64
__global__ void row_max(const float* x, float* y, int rows, int cols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * cols;
    float m = -INFINITY;
    for (int c = 0; c < cols; c += 1)
        m = fmaxf(m, xr[c]);
    y[row] = m;
}
