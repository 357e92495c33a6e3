// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own warp-shuffle spelling of the fold (the walk compares it by the block machine)
// GATE: corpus/reduce-sum
// Cooperative groups under a namespace alias of its own: reduce over 32-thread tiles, the tiles' sums parked by rank,
// the block's sync(), and tile 0 folds them the same way before one atomicAdd. The block and the
// tile, used by the fold only, go with it.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace coop = cooperative_groups;

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    coop::thread_block cta = coop::this_thread_block();
    int i = cta.group_index().x * cta.size() + cta.thread_rank();
    float v = 0.0f;
    if (i < n)
        v = x[i];

    atomicAdd(out, v);
}
