// kltrans: launch sum_tiles grid=ceil_div(n, kBlockSize) block=kBlockSize
// Warp tiles and register shuffles: the block is split into 32-thread tiles with
// cg::tiled_partition<32>. Each tile sums its 32 values with tile.shfl_down (offsets
// warpSize / 2 down to 1, no shared memory, no barriers), the first lane of every tile
// parks the tile's sum in shared memory, and after one block sync the first tile sums
// those kBlockSize / 32 partials the same way before the block's single atomicAdd.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

typedef float real;

constexpr int kBlockSize = 256;

// Sum of v over the 32 lanes of tile; the total ends up in lane 0.
__device__ real warp_sum(const cg::thread_block_tile<32>& tile, real v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    v += tile.shfl_down(v, offset);
  }
  return v;
}

__global__ void sum_tiles(const real* input, real* result, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ real tile_partial[kBlockSize / 32];

  const unsigned int rank = block.thread_rank();
  const int idx = block.group_index().x * block.size() + rank;

  real v = idx < n ? input[idx] : real(0);
  v = warp_sum(tile, v);

  if (tile.thread_rank() == 0) {
    tile_partial[tile.meta_group_rank()] = v;
  }
  block.sync();

  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? tile_partial[tile.thread_rank()] : real(0);
    v = warp_sum(tile, v);
    if (tile.thread_rank() == 0) {
      atomicAdd(result, v);
    }
  }
}
