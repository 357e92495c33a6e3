// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own warp-shuffle spelling of the fold (the walk compares it by the block machine)
// Thread 0 adds the warp partials serially: not the warp-0 shuffle shape the shuffle-loop
// site reads (refused there), but the block machine runs the block at the atomic and sees
// every thread's v folded into it: one atomicAdd(out, v) per thread.
// kltrans: launch block_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_sum(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    atomicAdd(out, v);
}
