// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own warp-shuffle spelling of the fold (the walk compares it by the block machine)
// Thread 0 adds the warp partials serially: not the warp-0 shuffle shape the shuffle-loop
// site reads (refused there), but the block machine runs the block at the atomic and sees
// every thread's v folded into it: one atomicAdd(out, v) per thread.
// kltrans: launch block_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_sum(const int* x, int* out, int n)
{
    __shared__ int part[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    // ok: reduction-shape: is not warp 0
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, off);
    }
    if ((threadIdx.x & 31) == 0) {
        part[threadIdx.x >> 5] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int t = 0;
        for (int w = 0; w < 8; ++w) t += part[w];
        atomicAdd(out, t);
    }
}
