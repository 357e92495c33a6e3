// RUN: kltrans opt -p cg-reduce
// GATE: tests/data/workloads/blockmax256
// ROUNDTRIP: model: shuffle-reduce writes a shfl_xor butterfly where this loop shuffles down
// An inline xor butterfly for a max over a tile with offsets written from 16: exact in any
// order, so no --assume is needed.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// kltrans: launch block_max grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_max(const float* x, float* out, int n)
{
    __shared__ float best[8];
    cg::thread_block block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    int g = blockIdx.x * 256 + threadIdx.x;
    float m = g < n ? x[g] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) {
        m = fmaxf(m, warp.shfl_xor(m, o));
    }
    if (warp.thread_rank() == 0) best[warp.meta_group_rank()] = m;
    block.sync();
    if (block.thread_rank() == 0) {
        float r = best[0];
        for (int k = 1; k < 8; ++k) r = fmaxf(r, best[k]);
        out[blockIdx.x] = r;
    }
}
