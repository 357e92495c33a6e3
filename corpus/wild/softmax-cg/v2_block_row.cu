// kltrans: launch softmaxBlockPerRow grid=rows block=kThreadsPerBlock
// Softmax over each row, one thread block per row. Every 32-thread tile reduces its
// threads' partial maximum (then total) with cg::reduce; lane 0 of each tile parks the
// result in shared memory, block.sync(), and each tile reduces the parked partials
// again, so every thread of the block holds the row's value.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

typedef float real;

constexpr int kThreadsPerBlock = 256;
constexpr int kTilesPerBlock = kThreadsPerBlock / 32;

__global__ void softmaxBlockPerRow(const real* input, real* output, int numRows, int numCols)
{
    __shared__ real partials[kTilesPerBlock];

    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);

    const int row = blockIdx.x;
    const real* rowIn = input + (long long)row * numCols;
    real* rowOut = output + (long long)row * numCols;

    real largest = -INFINITY;
    for (int j = block.thread_rank(); j < numCols; j += block.size())
    {
        largest = fmaxf(largest, rowIn[j]);
    }
    largest = cg::reduce(tile, largest, cg::greater<real>());
    if (tile.thread_rank() == 0)
    {
        partials[tile.meta_group_rank()] = largest;
    }
    block.sync();
    largest = tile.thread_rank() < kTilesPerBlock ? partials[tile.thread_rank()] : -INFINITY;
    largest = cg::reduce(tile, largest, cg::greater<real>());
    block.sync();  // partials is reused below

    real total = 0;
    for (int j = block.thread_rank(); j < numCols; j += block.size())
    {
        total += expf(rowIn[j] - largest);
    }
    total = cg::reduce(tile, total, cg::plus<real>());
    if (tile.thread_rank() == 0)
    {
        partials[tile.meta_group_rank()] = total;
    }
    block.sync();
    total = tile.thread_rank() < kTilesPerBlock ? partials[tile.thread_rank()] : 0;
    total = cg::reduce(tile, total, cg::plus<real>());

    for (int j = block.thread_rank(); j < numCols; j += block.size())
    {
        rowOut[j] = expf(rowIn[j] - largest) / total;
    }
}
