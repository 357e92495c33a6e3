// RUN: kltrans opt -p 'row-per-warp' --assume reassoc
// A row loop may count with size_t (or ptrdiff_t): the lanes start at lane and step by 32
// in the same type.
// kltrans: launch row_sum grid=ceil_div(rows, 256) block=256
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ out,
                                   int rows, size_t cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float s = 0.0f;
    for (size_t c = 0; c < cols; ++c) {
        s += x[(size_t)row * cols + c];
    }
    out[row] = s;
}
