// RUN: kltrans opt -p shuffle-reduce
// CHECK-SKIP: fold-order: --assume reassoc
// A float sum: the butterfly folds the lanes in another order than the library, which
// only the workload's tolerance (--assume reassoc) allows.
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
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}
