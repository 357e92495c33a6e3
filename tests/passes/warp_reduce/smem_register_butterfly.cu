// RUN: kltrans opt -p 'smem-reduce'
// GATE: corpus/reduce-sum
// Register reductions in the style of corpus/reduce-sum/expert.cu: a per-thread sum, an
// xor butterfly per warp (in a __device__ helper), the warp sums through
// shared memory, and a shfl_down reduction of the warp sums by warp 0 (both bodies
// unbraced). Every shuffle
// becomes a write of the lane's slot, __syncwarp(), a read of the partner's slot,
// __syncwarp().
// kltrans: launch warp_then_block grid=ceil_div(n, 1024) block=256
__device__ float butterfly(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}

extern "C" __global__ void warp_then_block(const float* x, float* out, int n)
{
    __shared__ float warp_sums[8];
    float acc = 0.0f;
    for (int i = blockIdx.x * 1024 + threadIdx.x; i < n && i < (blockIdx.x + 1) * 1024; i += 256) {
        acc += x[i];
    }
    acc = butterfly(acc);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_sums[warp] = acc;
    }
    __syncthreads();
    if (warp == 0) {
        float s = lane < 8 ? warp_sums[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_down_sync(0xffffffff, s, off);
        if (lane == 0) {
            atomicAdd(out, s);
        }
    }
}
