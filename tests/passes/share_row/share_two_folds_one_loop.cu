// RUN: kltrans opt -p 'share-row{group=block}' --assume reassoc
// ROUNDTRIP: none: unshare-row restores the loops as k += 1, not ++k
// One loop folds two scalars (a sum and a sum of squares): after it, each gets its own
// butterfly and slot exchange, one after the other, the slots reused behind a barrier.
// kltrans: launch center grid=ceil_div(rows, 128) block=128
__global__ void center(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f, q = 0.0f;
    for (int k = 0; k < cols; ++k) {
        const float v = src[(size_t)r * cols + k];
        s += v;
        q += v * v;
    }
    const float mean = s / cols;
    const float inv = rsqrtf(fmaxf(q / cols - mean * mean, 0.0f) + 1e-5f);
    for (int k = 0; k < cols; ++k)
        dst[(size_t)r * cols + k] = (src[(size_t)r * cols + k] - mean) * inv;
}
