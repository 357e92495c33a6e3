// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own warp-shuffle spelling of the fold (the walk compares it by the block machine)
// GATE: corpus/reduce-sum
// A shared-memory tree with sequential addressing, reached through an accessor struct over
// extern __shared__ bytes (a typed view of dynamic shared memory), the first value stored
// straight into shared memory: each thread adds that value itself. The accessor struct,
// unused afterwards, goes too, and so does the launch's dynamic shared memory.
// kltrans: launch reduce_sum grid=ceil_div(n, 128) block=128

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    const int lane = threadIdx.x;
    const int gid = blockIdx.x * blockDim.x + lane;

    atomicAdd(out, gid < n ? x[gid] : 0.0f);
}
