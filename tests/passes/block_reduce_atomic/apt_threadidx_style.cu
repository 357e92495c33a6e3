// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own names and a guarded value, not this spelling
// A common public spelling: lane and warp from % and /, __shfl_down_sync, warp 0 written
// `threadIdx.x < 32` and using threadIdx.x as its lane, the partials a file-level
// constant size. An integer count: the result is exact either way.
#define WARPS 8
// kltrans: launch count_positive grid=ceil_div(n, 256) block=256
extern "C" __global__ void count_positive(const int* v, int* total, int n)
{
    __shared__ int warp_counts[WARPS];
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int wid = threadIdx.x / 32;
    int c = (gid < n && v[gid] > 0) ? 1 : 0;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        c += __shfl_down_sync(0xffffffff, c, offset);
    if (lane == 0)
        warp_counts[wid] = c;
    __syncthreads();
    if (threadIdx.x < 32) {
        int s = (threadIdx.x < blockDim.x / 32) ? warp_counts[threadIdx.x] : 0;
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            s += __shfl_down_sync(0xffffffff, s, offset);
        if (threadIdx.x == 0)
            atomicAdd(total, s);
    }
}
