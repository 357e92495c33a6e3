// RUN: kltrans opt -p unshare-row --assume reassoc
// ROUNDTRIP: none: share-row folds with butterflies and slots, not an unrolled tree
// A block per row summing squares: the tree's rounds written out behind tests of the
// block's size, warp 0 finishing with a shuffle helper, thread 0 parking the row's scale
// in a shared scalar that every thread reads after a barrier. A group of one thread
// skips the rounds only a bigger group takes, passes the tests of its rank, and owns the
// scalar: the scalar becomes a local.
// kltrans: launch rms grid=ceil_div(rows, 128) block=128

__global__ void rms(const float* x, float* y, int rows, int cols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float scale;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float acc = 0.0f;
    for (int c = 0; c < cols; c += 1)
        acc += xr[c] * xr[c];
    {
        scale = rsqrtf(acc / cols + 1e-6f);
    }
    float s = scale;
    for (int c = 0; c < cols; c += 1)
        yr[c] = xr[c] * s;
}
