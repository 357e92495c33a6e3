// kltrans: launch softmaxWarpPerRow grid=ceil_div(rows, kThreadsPerBlock/32) block=kThreadsPerBlock
// Softmax over each row, one 32-thread tile per row. The lanes of the tile walk the row
// with a stride of 32 and the tile agrees on the row's maximum and total with
// cg::reduce (cg::greater, then cg::plus) instead of one thread doing it all.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

typedef float real;

constexpr int kThreadsPerBlock = 256;

__global__ void softmaxWarpPerRow(const real* input, real* output, int numRows, int numCols)
{
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());

    // a 1-D thread index split into (row, lane)
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= numRows)
    {
        return;  // uniform across the tile
    }

    const real* rowIn = input + (long long)row * numCols;
    real* rowOut = output + (long long)row * numCols;

    real largest = -INFINITY;
    for (int j = lane; j < numCols; j += 32)
    {
        largest = fmaxf(largest, rowIn[j]);
    }
    largest = cg::reduce(tile, largest, cg::greater<real>());

    real total = 0;
    for (int j = lane; j < numCols; j += 32)
    {
        total += expf(rowIn[j] - largest);
    }
    total = cg::reduce(tile, total, cg::plus<real>());
    tile.sync();

    for (int j = lane; j < numCols; j += 32)
    {
        rowOut[j] = expf(rowIn[j] - largest) / total;
    }
}
