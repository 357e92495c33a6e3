// RUN: kltrans opt -p 'grow-block{threads=256}' --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// A warp per row, four warps to a block of 128: eight to a block of 256.
// kltrans: launch softmax_rows grid=ceil_div(rows * 32, 256) block=256
__global__ void softmax_rows(const float* src, float* dst, int rows, int cols)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (r >= rows) return;
    const float* in = src + (size_t)r * cols;
    float* out = dst + (size_t)r * cols;
    float m = -INFINITY;
    for (int k = (threadIdx.x & 31); k < cols; k += 32) {
        m = fmaxf(m, in[k]);
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    float total = 0.0f;
    for (int k = (threadIdx.x & 31); k < cols; k += 32) {
        total += __expf(in[k] - m);
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        total += __shfl_xor_sync(0xffffffffu, total, offset);
    for (int k = (threadIdx.x & 31); k < cols; k += 32) {
        out[k] = __expf(in[k] - m) / total;
    }
}
