// kltrans: launch reduce7<float, 256, false> grid=min(ceil_div(n, 2*256), MAX_BLOCKS) block=256 smem=256*4
// Version 7: multiple elements per thread. The grid is capped at MAX_BLOCKS blocks
// (about one full wave of resident blocks) and each thread walks the input with a
// grid-stride while loop, summing a pair of elements blockSize apart per trip in a
// register, before the same unrolled tree runs once per block. The extra nIsPow2
// template parameter drops the bound check of the pair's second element when the
// caller knows n is a power of two (a multiple of 2*blockSize); the ragged case uses
// false. The launch above is the reduce7<float, 256, false> instantiation.

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

template <class T, unsigned int blockSize>
__device__ void warpReduce(volatile T *sdata, unsigned int tid)
{
    T v = sdata[tid];

    if (blockSize >= 64)
    {
        v += sdata[tid + 32];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }

    if (blockSize >= 32)
    {
        v += sdata[tid + 16];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }

    if (blockSize >= 16)
    {
        v += sdata[tid + 8];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }

    if (blockSize >= 8)
    {
        v += sdata[tid + 4];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }

    if (blockSize >= 4)
    {
        v += sdata[tid + 2];
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }

    if (blockSize >= 2)
    {
        v += sdata[tid + 1];
        __syncwarp();
        sdata[tid] = v;
    }
}

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce7(T *g_idata, T *g_odata, unsigned int n)
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

    sdata[tid] = mySum;
    __syncthreads();

    // tree in shared memory, one round per power of two, resolved at compile time
    if (blockSize >= 1024)
    {
        if (tid < 512)
        {
            sdata[tid] += sdata[tid + 512];
        }

        __syncthreads();
    }

    if (blockSize >= 512)
    {
        if (tid < 256)
        {
            sdata[tid] += sdata[tid + 256];
        }

        __syncthreads();
    }

    if (blockSize >= 256)
    {
        if (tid < 128)
        {
            sdata[tid] += sdata[tid + 128];
        }

        __syncthreads();
    }

    if (blockSize >= 128)
    {
        if (tid < 64)
        {
            sdata[tid] += sdata[tid + 64];
        }

        __syncthreads();
    }

    // warp 0 folds the last 64 values without block barriers
    if (tid < 32)
        warpReduce<T, blockSize>(sdata, tid);

    // thread 0 holds the block's partial sum
    if (tid == 0)
        atomicAdd(g_odata, sdata[0]);
}
