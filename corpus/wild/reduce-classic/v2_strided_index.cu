// kltrans: launch reduce2<float> grid=ceil_div(n, 256) block=256 smem=256*4
// Version 2: the same interleaved tree, but the work of round s goes to the first
// blockDim.x / (2*s) threads: thread tid handles the pair at index = 2*s*tid. The
// active threads are now contiguous (whole warps retire together, no divergence inside
// a warp), at the price of shared-memory bank conflicts as the stride grows.

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
__global__ void reduce2(T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();

    // one element per thread into shared memory (zero past the end)
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();

    // tree in shared memory, interleaved pairs handed to contiguous threads
    for (unsigned int s = 1; s < blockDim.x; s *= 2)
    {
        int index = 2 * s * tid;

        if (index < blockDim.x)
        {
            sdata[index] += sdata[index + s];
        }

        __syncthreads();
    }

    // thread 0 holds the block's partial sum
    if (tid == 0)
        atomicAdd(g_odata, sdata[0]);
}
