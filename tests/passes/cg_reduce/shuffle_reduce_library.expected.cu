// RUN: kltrans opt -p shuffle-reduce --assume reassoc
// GATE: corpus/reduce-sum
// cg::reduce written out as a shfl_xor butterfly over the tile (every lane gets the total,
// as from the library).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) {
        v = v + tile.shfl_xor(v, offset);
    }
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}
