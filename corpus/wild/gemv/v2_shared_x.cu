// kltrans: launch gemv_shared grid=ceil_div(rows, WARPS_PER_BLOCK) block=BLOCK_THREADS
// gemv, version 2: still a warp per row, 8 rows per block, but the block now brings x
// into shared memory X_CHUNK elements at a time; all 8 warps read the staged piece of x
// from shared memory instead of from global memory each.

typedef float real_t;

#define WARP_SIZE 32
#define WARPS_PER_BLOCK 8
#define BLOCK_THREADS (WARPS_PER_BLOCK * WARP_SIZE)
#define FULL_MASK 0xffffffffu
#define X_CHUNK 1024

__device__ real_t warpReduceSum(real_t val)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(FULL_MASK, val, offset);
    return val;
}

__global__ void gemv_shared(const real_t *A, const real_t *x, real_t *y, int rows, int cols)
{
    __shared__ real_t xs[X_CHUNK];

    int warpId = threadIdx.x / WARP_SIZE;
    int laneId = threadIdx.x % WARP_SIZE;
    int row = blockIdx.x * WARPS_PER_BLOCK + warpId;

    // warps past the last row stay: they help stage x and must reach every barrier
    real_t acc = 0;
    for (int base = 0; base < cols; base += X_CHUNK)
    {
        int len = min(X_CHUNK, cols - base);
        for (int i = threadIdx.x; i < len; i += BLOCK_THREADS)
            xs[i] = x[base + i];
        __syncthreads();

        if (row < rows)
        {
            const real_t *rowA = A + (size_t)row * cols + base;
            for (int i = laneId; i < len; i += WARP_SIZE)
                acc += rowA[i] * xs[i];
        }
        __syncthreads();
    }

    acc = warpReduceSum(acc);
    if (row < rows && laneId == 0)
        y[row] = acc;
}
