// kltrans: launch reduce3<float> grid=ceil_div(n, 256) block=256 smem=256*4
// Version 3: sequential addressing. Round s folds the upper half of the live values
// onto the lower half (thread tid adds sdata[tid + s]), with s running from
// blockDim.x / 2 down to 1. Active threads stay contiguous and consecutive threads
// touch consecutive words, so the bank conflicts of version 2 are gone. Half of the
// threads still sit idle from the first round on.

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
__global__ void reduce3(T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();

    // one element per thread into shared memory (zero past the end)
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();

    // tree in shared memory, halving the live range each round
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1)
    {
        if (tid < s)
        {
            sdata[tid] += sdata[tid + s];
        }

        __syncthreads();
    }

    // thread 0 holds the block's partial sum
    if (tid == 0)
        atomicAdd(g_odata, sdata[0]);
}
