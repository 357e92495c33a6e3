// RUN: kltrans opt -p 'block-reduce-atomic' --assume reassoc
// Row sums over a 2-D grid: blockIdx.y picks the row, so `&sums[blockIdx.y]` is the same
// address for every thread of a block. A double sum, unguarded inside the row: the
// value is read with a conditional expression already.
// kltrans: launch row_sums grid=(ceil_div(cols, 256), rows) block=256
extern "C" __global__ void row_sums(const double* m, double* sums, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    const double* row = m + (size_t)blockIdx.y * cols;
    {
        double val = (c < cols ? row[c] : 0.0);
        __shared__ double warp_part[32];
        for (int off = 16; off > 0; off >>= 1) {
            val += __shfl_xor_sync(0xffffffffu, val, off);
        }
        const int lane = threadIdx.x & 31;
        const int warp = threadIdx.x >> 5;
        if (lane == 0) {
            warp_part[warp] = val;
        }
        __syncthreads();
        if (warp == 0) {
            val = lane < (blockDim.x >> 5) ? warp_part[lane] : 0.0;
            for (int off = 16; off > 0; off >>= 1) {
                val += __shfl_xor_sync(0xffffffffu, val, off);
            }
            if (lane == 0) {
                atomicAdd(&sums[blockIdx.y], val);
            }
        }
    }
}
