// kltrans: launch sum_grid_stride grid=min(ceil_div(n, kBlockSize), kMaxBlocks) block=kBlockSize
// A capped grid with a grid-stride loop, and the library's tile reduction.
// The grid is at most kMaxBlocks blocks (one wave of resident blocks), so each thread
// first accumulates every (gridDim.x * block.size())-th element in a register; the
// 32-thread tiles then sum their registers with cg::reduce(tile, v, cg::plus<real>())
// instead of a hand-written shuffle loop, and the first tile combines the per-tile
// partials from shared memory the same way before the block's single atomicAdd.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

typedef float real;

constexpr int kBlockSize = 256;
constexpr int kSmCount = 132;       // H200
constexpr int kBlocksPerSm = 8;     // 8 x 256 threads fill an SM
constexpr int kMaxBlocks = kSmCount * kBlocksPerSm;

__global__ void sum_grid_stride(const real* input, real* result, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ real tile_partial[kBlockSize / 32];

  real v = 0;
  for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n;
       i += block.size() * gridDim.x) {
    v += input[i];
  }

  v = cg::reduce(tile, v, cg::plus<real>());

  if (tile.thread_rank() == 0) {
    tile_partial[tile.meta_group_rank()] = v;
  }
  block.sync();

  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? tile_partial[tile.thread_rank()] : real(0);
    v = cg::reduce(tile, v, cg::plus<real>());
    if (tile.thread_rank() == 0) {
      atomicAdd(result, v);
    }
  }
}
