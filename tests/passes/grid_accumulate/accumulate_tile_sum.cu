// RUN: kltrans opt -p grid-accumulate --assume reassoc
// GATE: corpus/reduce-sum
// One element per thread, summed over 32-lane tiles and published by one atomic per
// block: each thread folds every (blockDim.x * gridDim.x)-th element first, over a grid
// capped at 1024 blocks.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float partial[8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
    block.sync();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < 8; ++w) s += partial[w];
        atomicAdd(out, s);
    }
}
