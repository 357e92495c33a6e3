// kltrans: launch gemv_warp grid=ceil_div(rows, WARPS_PER_BLOCK) block=BLOCK_THREADS
// gemv, version 1: one warp per row. The 32 lanes read consecutive elements of the row
// (coalesced), keep a private partial sum, and fold the 32 partials with shuffles;
// lane 0 writes y.

typedef float real_t;

#define WARP_SIZE 32
#define WARPS_PER_BLOCK 8
#define BLOCK_THREADS (WARPS_PER_BLOCK * WARP_SIZE)
#define FULL_MASK 0xffffffffu

__device__ real_t warpReduceSum(real_t val)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(FULL_MASK, val, offset);
    return val;
}

__global__ void gemv_warp(const real_t *A, const real_t *x, real_t *y, int rows, int cols)
{
    int warpId = threadIdx.x / WARP_SIZE;
    int laneId = threadIdx.x % WARP_SIZE;
    int row = blockIdx.x * WARPS_PER_BLOCK + warpId;
    if (row >= rows)
        return;

    const real_t *rowA = A + (size_t)row * cols;
    real_t acc = 0;
    for (int col = laneId; col < cols; col += WARP_SIZE)
        acc += rowA[col] * x[col];

    acc = warpReduceSum(acc);
    if (laneId == 0)
        y[row] = acc;
}
