// RUN: kltrans opt -p one-per-block
// ROUNDTRIP: none: cap-blocks steps the item alone; the flip of the slot set is not re-created
// Each turn over a row flips the set of partial slots in the update clause (two sets, so a
// turn's stores never meet the last turn's reads). With a block per row there is one
// turn: the flip after it goes with the loop, since nothing reads `set` after the loop.
// kltrans: launch row_sums grid=rows block=64
__global__ void row_sums(const float* x, float* y, int rows, int cols)
{
    __shared__ float part[2][2];
    int set = 0;
    int row = blockIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            s += x[(size_t)row * cols + c];
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (threadIdx.x % 32 == 0)
            part[set][threadIdx.x / 32] = s;
        __syncthreads();
        if (threadIdx.x == 0)
            y[row] = part[set][0] + part[set][1];
    }
}
