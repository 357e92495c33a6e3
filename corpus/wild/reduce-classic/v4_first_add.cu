// kltrans: launch reduce4<float> grid=ceil_div(n, 2*256) block=256 smem=256*4
// Version 4: first add during the global load. Each block now covers 2 * blockDim.x
// elements: a thread reads one element and the element blockDim.x further on, adds the
// two in a register and stages only the sum, so half as many blocks run the same
// sequential-addressing tree and no thread is idle in its first round.

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
__global__ void reduce4(T *g_idata, T *g_odata, unsigned int n)
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
