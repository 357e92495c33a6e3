// Under a using-directive, the bare names are cooperative groups' (see spellings.cu).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
using namespace cooperative_groups;

__global__ void k(const float* x, float* y) {
    thread_block b = this_thread_block();
    thread_block_tile<32> w = tiled_partition<32>(b);
    float v = x[b.thread_rank()];  // op: index.block_rank
    v = reduce(w, v, plus<float>());  // op: reduce.warp sum
    sync(b);  // op: barrier.block
    if (w.thread_rank() == 0) y[w.meta_group_rank()] = v;  // op: index.lane index.warp
    auto h = tiled_partition<16>(b);
    y[h.thread_rank()] += this_grid().thread_rank();  // op: index.lane index.grid_rank
}
