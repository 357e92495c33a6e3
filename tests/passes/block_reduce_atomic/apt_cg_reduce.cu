// RUN: kltrans opt -p 'atomic-per-thread'
// ROUNDTRIP: none: block-reduce-atomic writes its own warp-shuffle spelling of the fold (the walk compares it by the block machine)
// GATE: corpus/reduce-sum
// Cooperative groups: cg::reduce over 32-thread tiles, the tiles' sums parked by rank,
// block.sync(), and tile 0 folds them the same way before one atomicAdd. The block and the
// tile, used by the fold only, go with it.
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float partial[8];
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    int i = block.group_index().x * block.size() + block.thread_rank();
    float v = i < n ? x[i] : 0.0f;

    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) {
        partial[tile.meta_group_rank()] = v;
    }
    block.sync();
    if (tile.meta_group_rank() == 0) {
        v = tile.thread_rank() < tile.meta_group_size() ? partial[tile.thread_rank()] : 0.0f;
        v = cg::reduce(tile, v, cg::plus<float>());
        if (tile.thread_rank() == 0) {
            atomicAdd(out, v);
        }
    }
}
