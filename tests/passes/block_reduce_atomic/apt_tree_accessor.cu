// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own warp-shuffle spelling of the fold (the walk compares it by the block machine)
// GATE: corpus/reduce-sum
// A shared-memory tree with sequential addressing, reached through an accessor struct over
// extern __shared__ memory (the CUDA samples' SharedMemory<T>), the first value stored
// straight into shared memory: each thread adds that value itself. The accessor struct,
// unused afterwards, goes too.
// kltrans: launch reduce_sum grid=ceil_div(n, 128) block=128 smem=128*4
template <class T>
struct SharedMemory
{
    __device__ inline operator T *()
    {
        extern __shared__ int __smem_buf[];
        return reinterpret_cast<T *>(__smem_buf);
    }
};

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    float *sdata = SharedMemory<float>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1)
    {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid == 0)
        atomicAdd(out, sdata[0]);
}
