// RUN: kltrans opt -p 'block-reduce-atomic' --assume reassoc
// Row sums over a 2-D grid: blockIdx.y picks the row, so `&sums[blockIdx.y]` is the same
// address for every thread of a block. A double sum, unguarded inside the row: the
// value is read with a conditional expression already.
// kltrans: launch row_sums grid=(ceil_div(cols, 256), rows) block=256
extern "C" __global__ void row_sums(const double* m, double* sums, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    const double* row = m + (size_t)blockIdx.y * cols;
    atomicAdd(&sums[blockIdx.y], c < cols ? row[c] : 0.0);
}
