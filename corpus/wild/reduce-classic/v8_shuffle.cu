// kltrans: launch reduce8<float, 256, false> grid=min(ceil_div(n, 2*256), MAX_BLOCKS) block=256 smem=256/32*4
// Version 8 (expert): warp shuffles instead of the shared-memory tree. After the same
// capped grid-stride accumulation as version 7, each warp sums its 32 registers with
// __shfl_down_sync (no shared memory, no barriers), lane 0 of every warp leaves the
// warp's partial in shared memory, and after one __syncthreads() warp 0 sums the
// blockSize / 32 partials the same way before the block's single atomicAdd. Shared
// memory shrinks to one slot per warp. The launch above is the
// reduce8<float, 256, false> instantiation.

// one wave of 256-thread blocks at full occupancy on an H200: 132 SMs x 8 blocks
#define MAX_BLOCKS 1056

template <class T>
struct SharedMemory
{
    __device__ inline operator T *()
    {
        extern __shared__ int __smem_buf[];
        return reinterpret_cast<T *>(__smem_buf);
    }

    __device__ inline operator const T *() const
    {
        extern __shared__ int __smem_buf[];
        return reinterpret_cast<const T *>(__smem_buf);
    }
};

// Sum of mySum over the lanes of a warp, left in lane 0.
template <class T>
__device__ __forceinline__ T warpReduceSum(unsigned int mask, T mySum)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        mySum += __shfl_down_sync(mask, mySum, offset);

    return mySum;
}

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce8(T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();

    // each thread accumulates as many pairs as it takes the whole grid to cover n
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;

    T mySum = 0;

    while (i < n)
    {
        mySum += g_idata[i];

        // a power-of-two n never leaves half a pair at the end
        if (nIsPow2 || i + blockSize < n)
            mySum += g_idata[i + blockSize];

        i += gridSize;
    }

    // every warp folds its 32 values in registers
    mySum = warpReduceSum<T>(0xffffffff, mySum);

    // lane 0 of each warp publishes the warp's partial
    if ((tid % 32) == 0)
        sdata[tid / 32] = mySum;

    __syncthreads();

    // warp 0 folds the per-warp partials; thread 0 adds the block's sum to the result
    if (tid < 32)
    {
        mySum = (tid < blockSize / 32) ? sdata[tid] : 0;
        mySum = warpReduceSum<T>(0xffffffff, mySum);

        if (tid == 0)
            atomicAdd(g_odata, mySum);
    }
}
