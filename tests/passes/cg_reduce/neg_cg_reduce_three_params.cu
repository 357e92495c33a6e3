// RUN: kltrans opt -p cg-reduce --assume reassoc
// CHECK-SKIP: warp-reduction: not a loop over (tile, value)
// The helper takes a third parameter (a scale folded in after the loop): cg::reduce has
// no place for it, so the helper stays.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
__device__ float scaled_sum(const cg::thread_block_tile<32>& tile, float v, float scale) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    return v * scale;
}

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = scaled_sum(tile, v, 1.0f);
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}
