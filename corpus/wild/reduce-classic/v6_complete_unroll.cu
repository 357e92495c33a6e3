// kltrans: launch reduce6<float, 256> grid=ceil_div(n, 2*256) block=256 smem=256*4
// Version 6: completely unrolled. The block size becomes a template parameter, so the
// tree's rounds are written out one per power of two and each `if (blockSize >= ...)`
// is decided at compile time: no loop counter, no loop branch, and the rounds a given
// block size does not need vanish. The last-warp helper takes blockSize as well.
// The launch above is the reduce6<float, 256> instantiation.

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

template <class T, unsigned int blockSize>
__global__ void reduce6(T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();

    // two elements per thread, added on the way into shared memory
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;

    T mySum = (i < n) ? g_idata[i] : 0;

    if (i + blockSize < n)
        mySum += g_idata[i + blockSize];

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
