// Every call is marked, after "op:" in a trailing comment, with the operation the kernel
// model must read it as, or with "none" and why it is not one (the refused cases).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
namespace coop = cooperative_groups;

struct Barrier { __device__ void sync() {} __device__ float shfl_down(float v, int) { return v; } };

__device__ float warp_sum(const cg::thread_block_tile<32>& w, float v) {
    for (int o = w.size() / 2; o > 0; o /= 2)  // op: size.tile
        v += w.shfl_down(v, o);  // op: shuffle.down
    return v;
}

__device__ float half_warp(cg::thread_block_tile<16> h, float v) {
    return h.shfl_xor(v, 1);  // op: shuffle.xor
}

__global__ void k(const float* x, float* y, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    auto t2 = coop::tiled_partition<32>(coop::this_thread_block());
    cg::thread_group dyn = cg::tiled_partition(block, 32);
    cg::grid_group grid = cg::this_grid();
    Barrier mine;
    float v = x[block.thread_rank()];  // op: index.block_rank
    v = __shfl_down_sync(0xffffffff, v, 16);  // op: shuffle.down
    v = __shfl_down_sync(0xffffffff, v, 8, 16);  // op: shuffle.down
    v = __shfl_xor_sync(0xffffffff, v, 4);  // op: shuffle.xor
    v = __shfl_sync(0xffffffff, v, 0);  // op: shuffle.idx
    v = __shfl_up_sync(0xffffffff, v, 1);  // op: shuffle.up
    v += tile.shfl_down(v, 2);  // op: shuffle.down
    v += t2.shfl(v, 0);  // op: shuffle.idx
    v = cg::reduce(tile, v, cg::plus<float>());  // op: reduce.warp sum
    v = cg::reduce(t2, v, cg::greater<float>());  // op: reduce.warp max
    v = coop::reduce(tile, v, [](float a, float b) { return a < b ? a : b; });  // op: reduce.warp custom
    int s = __reduce_add_sync(0xffffffff, (int)v);  // op: reduce.warp sum
    unsigned b = __ballot_sync(0xffffffff, v > 0);  // op: vote.ballot
    b |= tile.ballot(v > 0);  // op: vote.ballot
    __syncthreads();  // op: barrier.block
    block.sync();  // op: barrier.block
    cg::sync(block);  // op: barrier.block
    cg::this_thread_block().sync();  // op: barrier.block
    tile.sync();  // op: barrier.warp
    dyn.sync();  // op: barrier.warp
    __syncwarp();  // op: barrier.warp
    if (tile.thread_rank() == 0)  // op: index.lane
        y[tile.meta_group_rank()] = v + s + b;  // op: index.warp
    for (int i = grid.thread_rank(); i < n; i += grid.size())  // op: index.grid_rank size.grid
        y[i] += __ldg(&x[i]);  // op: load.cached
    atomicAdd(y, v);  // op: atomic.add
    mine.sync();  // op: none: a struct's method, not a cooperative group
    v = mine.shfl_down(v, 1);  // op: none: not a group
    v += warp_sum(tile, v) + half_warp(cg::tiled_partition<16>(block), v);
}
