// kltrans: launch gemv_vec4 grid=ceil_div(rows, ROWS_PER_BLOCK) block=BLOCK_THREADS
// gemv, version 3: x staged in shared memory by chunks as before, now with 16-byte
// accesses. When cols % 4 == 0 every row of A starts on a 16-byte boundary, so a lane
// reads A and the staged x as float4 (through reinterpret_cast); the scalar loop after
// it takes what the float4 loop left: nothing then, the whole chunk otherwise. Each warp
// works on ROWS_PER_WARP rows at once, so every float4 of x read from shared memory
// feeds several rows and each lane has that many independent loads of A in flight. A is
// streamed once through the read-only path (__ldg, __restrict__). A warp whose last rows
// fall past the end repeats row rows - 1 (its result is not stored) rather than branch.

typedef float real_t;

#define WARP_SIZE 32
#define WARPS_PER_BLOCK 8
#define BLOCK_THREADS (WARPS_PER_BLOCK * WARP_SIZE)
#define ROWS_PER_WARP 2
#define ROWS_PER_BLOCK (WARPS_PER_BLOCK * ROWS_PER_WARP)
#define FULL_MASK 0xffffffffu
#define X_CHUNK 2048

__device__ real_t warpReduceSum(real_t val)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(FULL_MASK, val, offset);
    return val;
}

__global__ void gemv_vec4(const real_t *__restrict__ A, const real_t *__restrict__ x,
                          real_t *__restrict__ y, int rows, int cols)
{
    __shared__ __align__(16) real_t xs[X_CHUNK];

    int warpId = threadIdx.x / WARP_SIZE;
    int laneId = threadIdx.x % WARP_SIZE;
    int row0 = (blockIdx.x * WARPS_PER_BLOCK + warpId) * ROWS_PER_WARP;
    const bool vec = (cols % 4) == 0;

    const real_t *rowA[ROWS_PER_WARP];
    real_t acc[ROWS_PER_WARP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r)
    {
        rowA[r] = A + (size_t)min(row0 + r, rows - 1) * cols;
        acc[r] = 0;
    }

    for (int base = 0; base < cols; base += X_CHUNK)
    {
        int len = min(X_CHUNK, cols - base);
        int len4 = vec ? len / 4 : 0;

        const float4 *x4 = reinterpret_cast<const float4 *>(x + base);
        float4 *xs4 = reinterpret_cast<float4 *>(xs);
        for (int i = threadIdx.x; i < len4; i += BLOCK_THREADS)
            xs4[i] = __ldg(x4 + i);
        for (int i = len4 * 4 + threadIdx.x; i < len; i += BLOCK_THREADS)
            xs[i] = __ldg(x + base + i);
        __syncthreads();

#pragma unroll 4
        for (int i = laneId; i < len4; i += WARP_SIZE)
        {
            float4 xv = xs4[i];
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r)
            {
                float4 av = __ldg(reinterpret_cast<const float4 *>(rowA[r] + base) + i);
                acc[r] += av.x * xv.x + av.y * xv.y + av.z * xv.z + av.w * xv.w;
            }
        }
        for (int i = len4 * 4 + laneId; i < len; i += WARP_SIZE)
        {
            real_t xv = xs[i];
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r)
                acc[r] += __ldg(rowA[r] + base + i) * xv;
        }
        __syncthreads();
    }

#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r)
    {
        real_t sum = warpReduceSum(acc[r]);
        if (laneId == 0 && row0 + r < rows)
            y[row0 + r] = sum;
    }
}
