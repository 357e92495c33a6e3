// RUN: kltrans opt -p 'share-row{group=block}' --assume reassoc
// ROUNDTRIP: none: unshare-row restores the loops as k += 1, not ++k
// One loop folds two scalars (a sum and a sum of squares): after it, each gets its own
// butterfly and slot exchange, one after the other, the slots reused behind a barrier.
// kltrans: launch center grid=rows block=128
__global__ void center(const float* src, float* dst, int rows, int cols)
{
    __shared__ float slots[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    float s = 0.0f, q = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) {
        const float v = src[(size_t)r * cols + k];
        s += v;
        q += v * v;
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, offset);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = s;
    __syncthreads();
    s = slots[0];
    for (int w = 1; w < (blockDim.x >> 5); ++w)
        s += slots[w];
    __syncthreads();
    for (int offset = 16; offset > 0; offset >>= 1)
        q += __shfl_xor_sync(0xffffffffu, q, offset);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = q;
    __syncthreads();
    q = slots[0];
    for (int w = 1; w < (blockDim.x >> 5); ++w)
        q += slots[w];
    __syncthreads();
    const float mean = s / cols;
    const float inv = rsqrtf(fmaxf(q / cols - mean * mean, 0.0f) + 1e-5f);
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        dst[(size_t)r * cols + k] = (src[(size_t)r * cols + k] - mean) * inv;
}
