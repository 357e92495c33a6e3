// RUN: kltrans opt -p 'tree-order{order=strided-index}' --assume reassoc
// GATE: corpus/reduce-sum
// Cooperative groups spell the tree: the thread's rank, the block's size and its sync.
// The pairs go to contiguous threads: pair 2 * s * rank, kept in a fresh index.
// kltrans: launch reduce_sum grid=ceil_div(n, 128) block=128
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float partial[128];
    cg::thread_block block = cg::this_thread_block();
    const unsigned int rank = block.thread_rank();
    const int idx = block.group_index().x * block.size() + rank;
    partial[rank] = idx < n ? x[idx] : 0.0f;
    block.sync();
    for (unsigned int stride = 1; stride < block.size(); stride *= 2) {
        unsigned int index = 2 * stride * rank;
        if (index < block.size()) {
            partial[index] = partial[index] + partial[index + stride];
        }
        cg::sync(block);
    }
    if (rank == 0) atomicAdd(out, partial[0]);
}
