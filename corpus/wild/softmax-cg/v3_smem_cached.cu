// kltrans: launch softmaxBlockCached grid=rows block=kThreadsPerBlock smem=4*cols
// Softmax over each row, one thread block per row, the row read from global memory
// only once: the first pass copies it into dynamic shared memory (numCols floats;
// rows of up to ~56k columns fit in the 227 KB an H200 block may opt into) while
// finding the maximum, the second pass turns the cached values into exp(v - max) in
// place while summing them, and the last pass scales the cache into the output. The
// two block-wide reductions (cg::reduce per tile, partials through shared memory, a
// second cg::reduce) are one lambda, told whether it takes the maximum or the sum.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

typedef float real;

constexpr int kThreadsPerBlock = 256;
constexpr int kTilesPerBlock = kThreadsPerBlock / 32;

__global__ void softmaxBlockCached(const real* input, real* output, int numRows, int numCols)
{
    __shared__ real partials[kTilesPerBlock];
    extern __shared__ unsigned char dynamicSmem[];
    real* rowCache = reinterpret_cast<real*>(dynamicSmem);

    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);

    auto blockReduce = [&](real value, bool takeMax) -> real
    {
        const real identity = takeMax ? -INFINITY : real(0);
        value = takeMax ? cg::reduce(tile, value, cg::greater<real>())
                        : cg::reduce(tile, value, cg::plus<real>());
        if (tile.thread_rank() == 0)
        {
            partials[tile.meta_group_rank()] = value;
        }
        block.sync();
        value = tile.thread_rank() < kTilesPerBlock ? partials[tile.thread_rank()] : identity;
        value = takeMax ? cg::reduce(tile, value, cg::greater<real>())
                        : cg::reduce(tile, value, cg::plus<real>());
        block.sync();  // partials may be reused by the next call
        return value;
    };

    const int row = blockIdx.x;
    const real* rowIn = input + (long long)row * numCols;
    real* rowOut = output + (long long)row * numCols;

    real largest = -INFINITY;
    for (int j = block.thread_rank(); j < numCols; j += block.size())
    {
        const real v = rowIn[j];
        rowCache[j] = v;
        largest = fmaxf(largest, v);
    }
    largest = blockReduce(largest, true);

    // each thread touches only the cache entries it wrote: no barrier needed for them
    real total = 0;
    for (int j = block.thread_rank(); j < numCols; j += block.size())
    {
        const real e = expf(rowCache[j] - largest);
        rowCache[j] = e;
        total += e;
    }
    total = blockReduce(total, false);

    for (int j = block.thread_rank(); j < numCols; j += block.size())
    {
        rowOut[j] = rowCache[j] / total;
    }
}
