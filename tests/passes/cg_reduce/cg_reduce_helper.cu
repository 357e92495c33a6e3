// RUN: kltrans opt -p cg-reduce --assume reassoc
// GATE: corpus/reduce-sum
// ROUNDTRIP: model: shuffle-reduce writes each call back as an inline shfl_xor butterfly, not the helper
// A tile-sum helper called twice (the tiles, then the first tile over their partials):
// both calls become cg::reduce, the helper goes, the library's header comes in.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
__device__ float tile_sum(const cg::thread_block_tile<32>& tile, float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    return v;
}

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float partial[8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = tile_sum(tile, v);
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
    block.sync();
    if (tile.meta_group_rank() == 0) {
        v = tile.thread_rank() < 8 ? partial[tile.thread_rank()] : 0.0f;
        v = tile_sum(tile, v);
        if (tile.thread_rank() == 0) atomicAdd(out, v);
    }
}
