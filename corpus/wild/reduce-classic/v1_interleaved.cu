// kltrans: launch reduce1<float> grid=ceil_div(n, 256) block=256 smem=256*4
// Version 1: a shared-memory tree inside each block. Every thread stages one element
// in dynamic shared memory, then the block halves the live values each round with
// interleaved addressing: in round s, threads whose tid is a multiple of 2*s add the
// value s slots to their right. The modulo test leaves the active threads scattered
// over every warp (divergent branches) but the result is one atomicAdd per block.

// Dynamic shared memory cannot be declared once per element type as a templated
// extern array (the declarations would clash), so a small accessor hands out the one
// untyped extern buffer cast to T*.
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
__global__ void reduce1(T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();

    // one element per thread into shared memory (zero past the end)
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();

    // tree in shared memory, interleaved pairs
    for (unsigned int s = 1; s < blockDim.x; s *= 2)
    {
        if ((tid % (2 * s)) == 0)
        {
            sdata[tid] += sdata[tid + s];
        }

        __syncthreads();
    }

    // thread 0 holds the block's partial sum
    if (tid == 0)
        atomicAdd(g_odata, sdata[0]);
}
