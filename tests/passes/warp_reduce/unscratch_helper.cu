// RUN: kltrans opt -p 'warp-reduce{mask=0xffffffffu,braces=true}'
// GATE: corpus/reduce-sum
// The per-warp scratch form that smem-reduce writes for a register butterfly in a
// __device__ helper: warp-reduce gives the __shfl_xor_sync calls back.
// kltrans: launch warp_sums grid=ceil_div(n, 256) block=256
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        __shared__ float warp_slots[1024];
        const unsigned int slot = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        warp_slots[slot] = v;
        __syncwarp();
        v += warp_slots[slot ^ off];
        __syncwarp();
    }
    return v;
}

extern "C" __global__ void warp_sums(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, v);
    }
}
