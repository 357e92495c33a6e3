// RUN: kltrans opt -p roll-last-warp
// ROUNDTRIP: none: unroll-last-warp writes warp 0's rounds inline, not as this volatile helper (the walk compares them on the block machine)
// GATE: corpus/reduce-sum
// The CUDA samples' last warp: a volatile-pointer helper called by the threads below 32.
// The loop runs down to one slot again; the helper, now unused, goes too.

template <class T>
__device__ void warpReduce(volatile T *sdata, unsigned int tid)
{
    T v = sdata[tid];
    v += sdata[tid + 32]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 16]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 8]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 4]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 2]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 1]; __syncwarp(); sdata[tid] = v;
}

// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32)
        warpReduce(sdata, tid);
    if (tid == 0) atomicAdd(out, sdata[0]);
}
