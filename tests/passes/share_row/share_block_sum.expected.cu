// RUN: kltrans opt -p 'share-row{group=block}' --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: none: unshare-row restores the loops as k += 1, not k++
// A block per row: the loops stride by blockDim.x from threadIdx.x; each fold is a warp
// butterfly, a slot per warp in shared memory, a barrier, and every thread sums the slots.
// kltrans: launch softmax_rows grid=rows block=256
__global__ void softmax_rows(const float* src, float* dst, int rows, int cols)
{
    __shared__ float slots[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* in = src + (size_t)r * cols;
    float* out = dst + (size_t)r * cols;
    float m = -INFINITY;
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        m = fmaxf(m, in[k]);
    for (int offset = 16; offset > 0; offset >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = m;
    __syncthreads();
    m = slots[0];
    for (int w = 1; w < (blockDim.x >> 5); ++w)
        m = fmaxf(m, slots[w]);
    __syncthreads();
    float total = 0.0f;
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        total += expf(in[k] - m);
    for (int offset = 16; offset > 0; offset >>= 1)
        total += __shfl_xor_sync(0xffffffffu, total, offset);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = total;
    __syncthreads();
    total = slots[0];
    for (int w = 1; w < (blockDim.x >> 5); ++w)
        total += slots[w];
    __syncthreads();
    for (int k = threadIdx.x; k < cols; k += blockDim.x)
        out[k] = expf(in[k] - m) / total;
}
