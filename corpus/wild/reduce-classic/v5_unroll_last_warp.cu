// kltrans: launch reduce5<float> grid=ceil_div(n, 2*256) block=256 smem=256*4
// Version 5: unroll the last warp. Once 32 or fewer values are live they all belong to
// warp 0, so the loop stops at s > 32 and a warp-level helper finishes the last six
// rounds without __syncthreads() and without the loop's index and branch overhead. The
// helper reads and writes shared memory through a volatile pointer; __syncwarp()
// separates each round's reads from its writes, so it does not rely on the lanes of a
// warp running in lockstep (not guaranteed since Volta).

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

template <class T>
__device__ void warpReduce(volatile T *sdata, unsigned int tid)
{
    T v = sdata[tid];

    v += sdata[tid + 32];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 16];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 8];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 4];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 2];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
    v += sdata[tid + 1];
    __syncwarp();
    sdata[tid] = v;
}

template <class T>
__global__ void reduce5(T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();

    // two elements per thread, added on the way into shared memory
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

    T mySum = (i < n) ? g_idata[i] : 0;

    if (i + blockDim.x < n)
        mySum += g_idata[i + blockDim.x];

    sdata[tid] = mySum;
    __syncthreads();

    // tree in shared memory down to the last 64 values
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1)
    {
        if (tid < s)
        {
            sdata[tid] += sdata[tid + s];
        }

        __syncthreads();
    }

    // warp 0 folds the last 64 values without block barriers
    if (tid < 32)
        warpReduce(sdata, tid);

    // thread 0 holds the block's partial sum
    if (tid == 0)
        atomicAdd(g_odata, sdata[0]);
}
