// RUN: kltrans opt -p shuffle-reduce --assume reassoc
// CHECK-SKIP: same-results
// Only half of each tile reaches the reduction: the block machine cannot run either
// kernel (a lane reads one that did not arrive), so nothing says the butterfly is the same.
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
    if (tile.thread_rank() < 16) {
        v = cg::reduce(tile, v, cg::plus<float>());
    }
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}
